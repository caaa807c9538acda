import { createWriteStream, renameSync, rmSync } from 'node:fs'
import { ZipFile } from 'yazl'
import type { BatchItem, BatchRowError } from '../db/schema/barcodes'
import { AppError } from '../shared/errors'
import { layoutSymbol } from './layout'
import { renderOffThread } from './render-pool'
import type { SymbolSettings } from './schemas'
import { SheetWriter, type TemplateName } from './sheet'
import { resolveSymbol } from './symbology'

export type BatchOutput = 'sheet' | 'zip'
export type BatchPlan = { items: BatchItem[]; settings: SymbolSettings; output: BatchOutput; template: TemplateName }
export type BatchProgress = (completed: number, errors: BatchRowError[]) => Promise<void> | void

const reasonOf = (err: unknown) => (err instanceof AppError ? err.message : 'could not be rendered')

/**
 * Renders a whole batch to `path`: invalid rows are skipped and reported (row numbers from 1),
 * valid rows become labels (sheet) or files (zip). Written to `path.part` and renamed at the end,
 * so a run that dies leaves no partial result and a rerun starts clean: no duplicate pages.
 */
export async function renderBatch(plan: BatchPlan, path: string, progress: BatchProgress, every = 100) {
  const part = `${path}.part`
  const errors: BatchRowError[] = []
  let rendered = 0
  try {
    if (plan.output === 'sheet') {
      const sheet = new SheetWriter(part, plan.template)
      for (const [i, item] of plan.items.entries()) {
        try {
          sheet.add(layoutSymbol(resolveSymbol(item.gtin, plan.settings.barcode_type), plan.settings), item.label)
          rendered++
        } catch (err) {
          errors.push({ row: i + 1, input: item.gtin, reason: reasonOf(err) })
        }
        // labels are vector paths, a few microseconds each: yield now and then so HTTP is served
        if ((i + 1) % 50 === 0) await new Promise((done) => setImmediate(done))
        if ((i + 1) % every === 0) await progress(i + 1, errors)
      }
      sheet.close()
    } else {
      const zip = new ZipFile()
      const done = new Promise<void>((resolve, reject) => {
        const out = createWriteStream(part)
        out.on('close', resolve)
        out.on('error', reject)
        zip.outputStream.pipe(out)
      })
      const names = new Set<string>()
      for (const [i, item] of plan.items.entries()) {
        try {
          const file = await renderOffThread(item.gtin, plan.settings)
          let name = file.fileName
          for (let n = 2; names.has(name); n++) name = file.fileName.replace(/(\.\w+)$/, `-${n}$1`)
          names.add(name)
          zip.addBuffer(Buffer.from(file.bytes), name, { compress: plan.settings.format !== 'png' })
          rendered++
        } catch (err) {
          errors.push({ row: i + 1, input: item.gtin, reason: reasonOf(err) })
        }
        if ((i + 1) % every === 0) await progress(i + 1, errors)
      }
      zip.end()
      await done
    }
    renameSync(part, path)
  } catch (err) {
    rmSync(part, { force: true })
    throw err
  }
  await progress(plan.items.length, errors)
  return { rendered, errors }
}
