import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { AVAILABILITIES, FEED_FORMATS, FEED_SOURCES, RUN_STATUSES } from '../db/schema/feeds'
import { Id, ShortId } from '../shared/ids'
import { PageQuery } from '../shared/pagination'
import { Chars, Enum } from '../shared/schema-types'
import { MERCHANT_ATTRIBUTES } from './adapters/affiliate'

export const Source = Enum(FEED_SOURCES, {
  description: 'off (Open Food Facts), usda (FoodData Central Branded Foods) or affiliate (a merchant feed)',
})
export const Format = Enum(FEED_FORMATS, { description: 'detected from the file when omitted' })
export const Mapping = t.Object(
  Object.fromEntries(MERCHANT_ATTRIBUTES.map((a) => [a, t.Optional(Chars(255, { minLength: 1 }))])),
  {
    additionalProperties: false,
    description:
      'affiliate feeds: the column holding each Google Merchant attribute, where the feed names it differently (e.g. {"gtin": "ean"})',
  },
)

export const RunCreate = t.Object(
  {
    source: Source,
    path: Chars(4096, {
      minLength: 1,
      description: 'a file (or, for the USDA CSV download, a folder) inside the server feed folder FEED_DIR',
    }),
    retailer_id: t.Optional(Id('retailer_id')),
    full: t.Optional(t.Boolean({ description: 'the file is a full dump: report the products it no longer has' })),
    format: t.Optional(Format),
    mapping: t.Optional(Mapping),
  },
  { additionalProperties: false },
)

export const RunUploadQuery = t.Object({
  source: t.Optional(Source),
  retailer_id: t.Optional(Id('retailer_id')),
  full: t.Optional(Enum(['true', 'false'])),
  format: t.Optional(Format),
  file_name: t.Optional(Chars(255, { minLength: 1, description: 'the name the run shows for an uploaded file' })),
})

const Count = Type.Integer({ minimum: 0 })

export const Run = t.Object(
  {
    id: ShortId,
    source: Source,
    authority: Enum(['platform', 'organization'], {
      description:
        "who runs it: `platform` (the admin token, the CLI, a schedule): its values carry the source's weight; `organization` (a manager key): the organization's own statement, recorded with it as contributor and weighted as a crowd contribution (crowd_sourced, 0.4: one organization alone never promotes a value), which never displaces another source's or organization's values and decides no field of another organization's claimed product",
    }),
    data_source: t.String({
      description: 'the catalog provenance source its values are recorded under (crowd_sourced for an organization)',
    }),
    format: Format,
    file: t.String(),
    retailer_id: t.Union([ShortId, t.Null()]),
    full: t.Boolean(),
    status: Enum(RUN_STATUSES),
    progress: t.Object({
      percent: Type.Integer({
        minimum: 0,
        maximum: 100,
        description:
          'rows written of the rows in the file (estimated from the bytes read until it is read); 100 only when the run succeeded',
      }),
      rows_written: Count,
      rows_total: t.Union([Type.Integer(), t.Null()], {
        description:
          'the rows of the file: exact once it is read (rows_exact), estimated before, null before any is read',
      }),
      rows_exact: t.Boolean(),
      chunks_total: t.Union([Type.Integer(), t.Null()], { description: 'known once the whole file is read' }),
      chunks_done: Count,
      bytes_read: Count,
      bytes_total: t.Union([Type.Integer(), t.Null()]),
    }),
    counts: t.Object({ read: Count, created: Count, updated: Count, unchanged: Count, rejected: Count }),
    code_readings: t.Record(t.String(), Type.Integer(), {
      description:
        "how the records' codes were read: gtin8, upce, gtin12, gtin13, gtin14, upca_leading_zero_restored (an 11-digit UPC-A with its leading zero dropped)",
    }),
    rejected_sample: t.Array(t.Object({ line: Type.Integer(), reason: t.String(), input: t.String() }), {
      description: 'the first rejected rows (up to 20), with their line (CSV: record number, header = 1)',
    }),
    disappeared: t.Union([t.Object({ count: Count, sample: t.Array(t.String()) }), t.Null()], {
      description:
        'full imports: the products the previous full import of this source by the same runner (this organization, or the platform) had and this one does not (kept in the catalog)',
    }),
    error: t.Union([t.String(), t.Null()]),
    created: t.String({ format: 'date-time' }),
    started_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    finished_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  },
  { 'x-schema-name': 'FeedRun' },
)

export const RunQuery = t.Composite([PageQuery, t.Object({ status: t.Optional(Enum(RUN_STATUSES)) })])
export const RunParams = t.Object({ run_id: Id('run_id') })

export const Offer = t.Object(
  {
    id: ShortId,
    gtin: t.String(),
    retailer_id: ShortId,
    item_id: t.String({ description: "the merchant's own id of the item" }),
    title: t.String(),
    price: t.String({
      pattern: '^[0-9]+\\.[0-9]{2,4}$',
      description: 'the price asked now (the sale price while one applies), decimal',
    }),
    regular_price: t.String({ pattern: '^[0-9]+\\.[0-9]{2,4}$' }),
    currency: t.String({ description: 'ISO 4217' }),
    url: t.String(),
    availability: Enum(AVAILABILITIES),
    multipack: t.Union([Type.Integer(), t.Null()], {
      description: 'units in a merchant-defined multipack of this GTIN',
    }),
    observed_at: t.String({ format: 'date-time' }),
    created: t.String({ format: 'date-time' }),
    modified: t.String({ format: 'date-time' }),
  },
  { 'x-schema-name': 'Offer' },
)

export const OfferQuery = t.Composite([PageQuery, t.Object({ retailer_id: t.Optional(Id('retailer_id')) })])
