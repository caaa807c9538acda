import { readFileSync } from 'node:fs'
import { extname, resolve } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { type Command, Option } from 'commander'
import { t } from 'elysia'
import { renderBatch } from '../../src/barcodes/batch-render'
import { itemsFromCsv } from '../../src/barcodes/batches'
import { symbolOptions, withDefaults } from '../../src/barcodes/schemas'
import { TEMPLATES, type TemplateName } from '../../src/barcodes/sheet'
import { fieldErrors } from '../../src/http/validation'
import { AppError } from '../../src/shared/errors'
import { exits, fileErrorWords, plural } from './command'
import { progressReporter } from './progress'

const Options = t.Object(symbolOptions)

type BatchOptions = {
  input: string
  output: string
  template: TemplateName
  type?: string
  format?: string
  moduleWidth?: string
  moduleHeight?: string
  fontSize?: string
  quietZone?: string
  dpi?: string
  text: boolean
}

export function barcodeCommands(program: Command) {
  program
    .command('barcode')
    .description('barcodes')
    .command('batch')
    .description('render a CSV (gtin, optional label) to a label-sheet PDF or a zip of images, offline')
    .requiredOption('--input <file.csv>', 'the GTINs, one per row (columns gtin, label)')
    .requiredOption('--output <file>', 'labels.pdf (a sheet) or labels.zip (one image per row)')
    .addOption(
      new Option('--template <name>', 'label sheet of a PDF output').choices(Object.keys(TEMPLATES)).default('a4-3x8'),
    )
    .option('--type <symbology>', 'auto, ean13, upca, … (as the batch API)')
    .option('--format <format>', 'svg, png, eps or pdf (zip output only)')
    .option('--module-width <mm>', 'narrowest bar, mm')
    .option('--module-height <mm>', 'bar height, mm')
    .option('--font-size <pt>', 'human-readable text size, pt')
    .option('--quiet-zone <mm>', 'light margin, mm')
    .option('--dpi <n>', 'raster resolution (png)')
    .option('--no-text', 'no human-readable text under the bars')
    .action(exits(batch))
}

/** `barcode batch`: renders a CSV (gtin, optional label) to a sheet PDF or a zip, offline. */
async function batch(values: BatchOptions): Promise<number> {
  const output = resolve(values.output)
  const kind =
    extname(output).toLowerCase() === '.zip' ? 'zip' : extname(output).toLowerCase() === '.pdf' ? 'sheet' : null
  if (!kind) {
    console.error('--output must end in .pdf (a label sheet) or .zip (one image per row)')
    return 2
  }
  const number = (v: string | undefined) => (v === undefined ? undefined : Number(v))
  const options = Object.fromEntries(
    Object.entries({
      barcode_type: values.type,
      format: values.format,
      module_width: number(values.moduleWidth),
      module_height: number(values.moduleHeight),
      font_size: number(values.fontSize),
      quiet_zone: number(values.quietZone),
      dpi: number(values.dpi),
      write_text: values.text ? undefined : false,
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
    console.error(
      err instanceof AppError ? csvProblem(values.input, err) : `cannot read ${values.input}: ${fileErrorWords(err)}`,
    )
    return 2
  }
  const progress = await progressReporter(items.length, 'rendered', 'labels')
  const { rendered, errors } = await renderBatch(
    { items, settings: withDefaults(options), output: kind, template: values.template },
    output,
    (done) => progress.update(done),
    Math.max(1, Math.floor(items.length / 200)),
  )
  progress.stop()
  for (const e of errors) console.error(`row ${e.row} (${e.input}): ${e.reason}`)
  console.log(`${plural(rendered, 'label')} written to ${output}; ${plural(errors.length, 'row')} skipped`)
  return 0
}

/**
 * The CSV's problem as the CLI's user meets it: the file named, no request `body`, and the row
 * limit with what to do about it (the API's words are about a request).
 */
function csvProblem(file: string, err: AppError): string {
  const reason = err.errors?.[0]?.message ?? err.message
  const over = /at most (\d+) rows; got (\d+)/.exec(reason)
  if (over) return `${file} has ${over[2]} rows; one run renders at most ${over[1]}: split the file and run each part`
  return `${file}: ${reason}`
}
