import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Id, ShortId } from '../shared/ids'
import { Chars, Enum } from '../shared/schema-types'
import { FORMATS, symbolOptions } from './schemas'
import { TEMPLATES } from './sheet'
import { BARCODE_TYPES } from './symbology'

export const MAX_BATCH_ITEMS = 10_000
const MAX_GTIN_LENGTH = 100
const MAX_LABEL_CHARS = 100
const OUTPUTS = ['sheet', 'zip'] as const
/** `output` when a CSV upload leaves it out (the JSON form names it, contract §8). */
export const DEFAULT_OUTPUT = 'sheet' satisfies (typeof OUTPUTS)[number]

/**
 * The JSON body limit of the batch route: MAX_BATCH_ITEMS items of the longest gtin and label, as
 * a client that escapes every non-ASCII character writes them (Python's json.dumps by default):
 * 6 bytes (`\uXXXX`) per UTF-16 unit, so 12 per label character outside the BMP, with `", "` and
 * `": "` separators; plus 64 KiB for the options and any other whitespace. About 18 MB: above the
 * global 1 MiB, which a 10,000-item batch with labels exceeds.
 */
const ITEM_OVERHEAD = '{"gtin": "", "label": ""}, '.length
export const BATCH_JSON_LIMIT = MAX_BATCH_ITEMS * (ITEM_OVERHEAD + 6 * MAX_GTIN_LENGTH + 12 * MAX_LABEL_CHARS) + 65_536
const TEMPLATE_NAMES = Object.keys(TEMPLATES) as (keyof typeof TEMPLATES)[]

const batchOptions = {
  output: Enum(OUTPUTS, { description: 'sheet: a PDF of label sheets; zip: one file per item in `format`' }),
  template: t.Optional(
    Enum(TEMPLATE_NAMES, { description: 'label sheet, default a4-3x8 (US Letter 3×10 = Avery 5160)' }),
  ),
}

export const BatchRequest = t.Object(
  {
    items: t.Array(
      t.Object(
        {
          gtin: t.String({ minLength: 1, maxLength: MAX_GTIN_LENGTH }),
          label: t.Optional(
            Chars(MAX_LABEL_CHARS, {
              description: 'printed above the symbol on sheets (any Latin, Greek or Cyrillic text)',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_BATCH_ITEMS },
    ),
    ...symbolOptions,
    ...batchOptions,
  },
  { additionalProperties: false, 'x-json-limit': BATCH_JSON_LIMIT },
)

/** The same options as query parameters, for a CSV upload (text/csv, columns gtin and optional label). */
export const BatchCsvQuery = t.Object({
  barcode_type: t.Optional(Enum(BARCODE_TYPES)),
  format: t.Optional(Enum(FORMATS)),
  module_width: t.Optional(t.Number({ minimum: 0.1, maximum: 2 })),
  module_height: t.Optional(t.Number({ minimum: 1, maximum: 100 })),
  font_size: t.Optional(t.Number({ minimum: 4, maximum: 24 })),
  quiet_zone: t.Optional(t.Number({ minimum: 0, maximum: 20 })),
  write_text: t.Optional(t.BooleanString()),
  embed_font: t.Optional(t.BooleanString()),
  dpi: t.Optional(t.Integer({ minimum: 72, maximum: 1200 })),
  output: t.Optional(Enum(OUTPUTS, { description: 'sheet (default) or zip' })),
  template: t.Optional(Enum(TEMPLATE_NAMES)),
})

export const Batch = t.Object(
  {
    id: ShortId,
    status: Enum(['queued', 'running', 'succeeded', 'failed'] as const),
    output: t.String(),
    template: t.Union([t.String(), t.Null()]),
    format: t.String(),
    total: Type.Integer(),
    completed: Type.Integer(),
    errors: t.Array(t.Object({ row: Type.Integer(), input: t.String(), reason: t.String() })),
    created: t.String({ format: 'date-time' }),
    finished_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    expires_at: t.Union([t.String({ format: 'date-time' }), t.Null()], {
      description:
        'when the output is removed (BATCH_RETENTION_HOURS after success, default 24); the download is 410 after',
    }),
    download_url: t.Union([t.String(), t.Null()]),
  },
  { 'x-schema-name': 'BarcodeBatch' },
)

export const BatchParams = t.Object({ id: Id('id') })
