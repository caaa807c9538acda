import { readFileSync } from 'node:fs'
import { extname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import { renderBatch } from '../../src/barcodes/batch-render'
import { itemsFromCsv } from '../../src/barcodes/batches'
import { symbolOptions, withDefaults } from '../../src/barcodes/schemas'
import { TEMPLATES, type TemplateName } from '../../src/barcodes/sheet'
import { fieldErrors } from '../../src/http/validation'
import { AppError } from '../../src/shared/errors'
import { progressReporter } from './progress'

export const barcodeUsage = `usage: cli barcode batch --input gtins.csv --output labels.pdf|labels.zip
         [--template a4-3x8|letter-3x10] [--type auto|ean13|…] [--format svg|png|eps|pdf (zip only)]
         [--module-width MM] [--module-height MM] [--font-size PT] [--quiet-zone MM] [--no-text] [--dpi N]`

const Options = t.Object(symbolOptions)

/** `barcode batch`: renders a CSV (gtin, optional label) to a sheet PDF or a zip, offline. */
export async function barcodeCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  if (sub !== 'batch') {
    console.error(barcodeUsage)
    return 2
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      input: { type: 'string' },
      output: { type: 'string' },
      template: { type: 'string', default: 'a4-3x8' },
      type: { type: 'string' },
      format: { type: 'string' },
      'module-width': { type: 'string' },
      'module-height': { type: 'string' },
      'font-size': { type: 'string' },
      'quiet-zone': { type: 'string' },
      dpi: { type: 'string' },
      'no-text': { type: 'boolean', default: false },
    },
    strict: true,
  })
  const output = values.output ? resolve(values.output) : ''
  const kind =
    extname(output).toLowerCase() === '.zip' ? 'zip' : extname(output).toLowerCase() === '.pdf' ? 'sheet' : null
  if (!values.input || !kind || !(values.template! in TEMPLATES)) {
    console.error(barcodeUsage)
    return 2
  }
  const number = (v: string | undefined) => (v === undefined ? undefined : Number(v))
  const options = Object.fromEntries(
    Object.entries({
      barcode_type: values.type,
      format: values.format,
      module_width: number(values['module-width']),
      module_height: number(values['module-height']),
      font_size: number(values['font-size']),
      quiet_zone: number(values['quiet-zone']),
      dpi: number(values.dpi),
      write_text: values['no-text'] ? false : undefined,
    }).filter(([, v]) => v !== undefined),
  )
  if (!Value.Check(Options, options)) {
    for (const e of fieldErrors([...Value.Errors(Options, options)] as never)) console.error(`${e.field}: ${e.message}`)
    return 2
  }
  let items: ReturnType<typeof itemsFromCsv>
  try {
    items = itemsFromCsv(readFileSync(values.input, 'utf8'))
  } catch (err) {
    console.error(err instanceof AppError ? err.message : `cannot read ${values.input}`)
    return 2
  }
  const progress = await progressReporter(items.length, 'rendered')
  const { rendered, errors } = await renderBatch(
    { items, settings: withDefaults(options), output: kind, template: values.template as TemplateName },
    output,
    (done) => progress.update(done),
    Math.max(1, Math.floor(items.length / 200)),
  )
  progress.stop()
  for (const e of errors) console.error(`row ${e.row} (${e.input}): ${e.reason}`)
  console.log(`${rendered} labels written to ${output}; ${errors.length} rows skipped`)
  return 0
}
