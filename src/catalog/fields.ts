import { type TOptional, type TSchema, Type } from '@sinclair/typebox'
import { t } from 'elysia'
import type { products } from '../db/schema/catalog'
import { UOMS } from '../db/schema/units'
import { CountryCode } from '../shared/countries'
import { Chars, Enum } from '../shared/schema-types'

type Column = keyof typeof products.$inferSelect

/**
 * One product field of the record that is stored as given: its column, the schema it is written
 * with (create, patch, contribution, feeds), the schema it is read with, and what else it takes
 * part in. Everything that lists product fields derives from PRODUCT_FIELDS below.
 */
type FieldDef = {
  column: Column
  input: TSchema
  output: TSchema
  /** a crowd contribution may propose it */
  contributable?: true
  /** scanned for prohibited date labels (AB 660) on registration and in date_label_compliance */
  dateLabels?: true
  /** full-text searchable, with a weight (A highest) */
  search?: 'A' | 'B' | 'C' | 'D'
  /** a feed may supply it */
  feed?: true
  /** how a given value is stored (for example upper-cased codes) */
  normalize?: (value: string) => string
}

const Text = (maxLength: number) => Chars(maxLength)
const Measure = Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { error: 'must be a number >= 0 or null' })
const Uom = t.String({ maxLength: 10, description: 'UN/CEFACT Rec. 20/21 code' })
const Gpc = t.String({ maxLength: 8, pattern: '^([0-9]{8})?$', error: 'must be 8 digits or empty' })
const ImageUrl = Chars(2048, {
  pattern: '^(https?://[^\\s/?#]+[^\\s]*)?$',
  error: 'must be an absolute http(s) URL of at most 2048 characters, or empty',
})
// read back as stored: what the input's check allowed, upper-cased (the list of assigned codes is
// not checked again on the way out, so a code ISO withdraws later still reads)
const CountryOut = t.String({ maxLength: 2, pattern: '^([A-Za-z]{2})?$' })

// Generic so that each field keeps its literal flags: the lists below are typed from them.
// A field reads back with the limits it is written with (the response schemas carry them too).
const text = <const F extends Omit<Partial<FieldDef>, 'input' | 'output'> & { column: Column }>(
  maxLength: number,
  flags: F,
) => ({ input: Text(maxLength), output: Text(maxLength), feed: true as const, ...flags })
const measure = <const C extends Column>(column: C) => ({
  column,
  input: Measure,
  output: Measure,
  feed: true as const,
})
const uom = <const C extends Column>(column: C) => ({ column, input: Uom, output: Uom, feed: true as const })
const gpc = <const C extends Column>(column: C) => ({ column, input: Gpc, output: Gpc, feed: true as const })

/** The product record's stored fields (spec: product record; contract §5), in record order. */
export const PRODUCT_FIELDS = {
  product_name: text(255, { column: 'productName', contributable: true, dateLabels: true, search: 'A' }),
  manufacturer: text(255, { column: 'manufacturer', contributable: true, search: 'C' }),
  description: text(10_000, { column: 'description', contributable: true, dateLabels: true, search: 'C' }),
  image_url: {
    column: 'imageUrl',
    input: ImageUrl,
    output: ImageUrl,
    contributable: true as const,
    feed: true as const,
  },
  country_of_origin: {
    column: 'countryOfOrigin',
    input: CountryCode(),
    output: CountryOut,
    contributable: true as const,
    feed: true as const,
    normalize: (v: string) => v.toUpperCase(),
  },
  net_content: text(100, { column: 'netContent', contributable: true, dateLabels: true }),
  net_content_value: measure('netContentValue'),
  net_content_uom: {
    column: 'netContentUom',
    input: Type.Union([Enum(UOMS), Type.Null()], { error: `must be one of ${UOMS.join(', ')}, or null` }),
    output: t.Union([Enum([...UOMS, ''], { description: 'UN/CEFACT unit code; empty on legacy records' }), t.Null()]),
    feed: true as const,
  },
  length: measure('length'),
  width: measure('width'),
  height: measure('height'),
  depth: measure('depth'),
  length_uom: uom('lengthUom'),
  width_uom: uom('widthUom'),
  height_uom: uom('heightUom'),
  depth_uom: uom('depthUom'),
  gross_weight: measure('grossWeight'),
  net_weight: measure('netWeight'),
  gross_weight_uom: uom('grossWeightUom'),
  net_weight_uom: uom('netWeightUom'),
  gpc_brick_code: gpc('gpcBrickCode'),
  gpc_class_code: gpc('gpcClassCode'),
  gpc_family_code: gpc('gpcFamilyCode'),
  gpc_segment_code: gpc('gpcSegmentCode'),
  ingredients_text: text(10_000, { column: 'ingredientsText', contributable: true, search: 'D' }),
  usage_instructions: text(2_000, { column: 'usageInstructions', contributable: true, dateLabels: true }),
} satisfies Record<string, FieldDef>

export type ProductField = keyof typeof PRODUCT_FIELDS
type Entry = [ProductField, FieldDef]
const ENTRIES = Object.entries(PRODUCT_FIELDS) as Entry[]
const names = (keep: (def: FieldDef) => unknown) => ENTRIES.filter(([, d]) => keep(d)).map(([name]) => name)

/** API field -> column. */
export const FIELD_COLUMNS = Object.fromEntries(ENTRIES.map(([name, d]) => [name, d.column])) as {
  [K in ProductField]: (typeof PRODUCT_FIELDS)[K]['column']
}
/** The fields whose definition sets a flag. */
type Flagged<K extends 'contributable' | 'dateLabels' | 'feed'> = {
  [N in ProductField]: (typeof PRODUCT_FIELDS)[N] extends Record<K, true> ? N : never
}[ProductField]
export type ContributableField = Flagged<'contributable'>
export type DateLabelField = Flagged<'dateLabels'>
export const CONTRIBUTABLE_FIELDS = names((d) => d.contributable) as ContributableField[]
export const DATE_LABEL_FIELDS = names((d) => d.dateLabels) as DateLabelField[]
export const SEARCH_FIELDS = ENTRIES.filter(([, d]) => d.search).map(([name, d]) => ({ name, weight: d.search! }))
export const FEED_FIELDS = names((d) => d.feed)

/** The stored value of a given one (codes upper-cased, …). */
export const normalizeField = (field: ProductField, value: unknown) => {
  const normalize = (PRODUCT_FIELDS[field] as FieldDef).normalize
  return normalize && typeof value === 'string' ? normalize(value) : value
}

/** Optional input schemas of the given fields, for create, patch, contribution and feeds. */
export function inputSchemas<F extends ProductField>(fields: readonly F[]) {
  return Object.fromEntries(fields.map((f) => [f, t.Optional(PRODUCT_FIELDS[f].input)])) as {
    [K in F]: TOptional<(typeof PRODUCT_FIELDS)[K]['input']>
  }
}

/** Response schemas of every stored field. */
export const outputSchemas = () =>
  Object.fromEntries(ENTRIES.map(([name, d]) => [name, d.output])) as {
    [K in ProductField]: (typeof PRODUCT_FIELDS)[K]['output']
  }

export const ALL_FIELDS = ENTRIES.map(([name]) => name)

/**
 * Tag lists a source may state beside the fields (OFF's labels_tags, allergens_tags, traces_tags,
 * as slugs): candidates like any value, which promotion merges with what the ingredient text says
 * into the derived arrays of the same names.
 */
export const TAG_FIELDS = ['certifications', 'contains_allergens', 'may_contain_allergens'] as const
export type TagField = (typeof TAG_FIELDS)[number]
