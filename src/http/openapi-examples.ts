import { sample } from 'openapi-sampler'
import { ShortId } from '../shared/ids'

/**
 * Examples for the OpenAPI document. Fields get an example by name from FIELD_EXAMPLES (a value is
 * kept only if it satisfies the field's own schema, so a changed limit drops a stale example
 * rather than publish a wrong one); whole bodies and responses are then put together from the
 * fields' examples by openapi-sampler (Redocly's), so an envelope, a page or a new resource needs
 * no example of its own. A schema's own `examples` always win.
 */

type Json = Record<string, any>

const ORGANIZATION_ID = 'Hq3vTz8KcWbN5mRfYg2XpJ'
const GTIN = '04006381333931'
const AT = '2025-03-14T09:26:53.000Z'
const DAY = '2025-03-14'

/** Example values by field name; `Schema.field` for a field of one named schema only. */
const FIELD_EXAMPLES: Record<string, unknown> = {
  // ids: shortuuids; the organization is the same one throughout
  organization_id: ORGANIZATION_ID,
  owner_id: ORGANIZATION_ID,
  contributor_id: ORGANIZATION_ID,
  product_id: 'c8Ve4nTqPz7LhKd2WmRgXs',
  retailer_id: 'R5tJwQ9aZk3Nf7bXhVm2Ce',
  campaign_id: 'C4mPgN8sTq2WzYk6VhRbJd',
  endpoint_id: 'E7wHk3NqZt9PbVf2XmGcRa',
  event_id: 'V2gNbT8kQz5WmHr3JpXcYd',
  from_member_id: 'M3kTq8VzNb2WpRf5HgXcJd',
  to_member_id: 'M9bWc4KzTq7NpHf2VgRxJs',
  request_id: '6f1c2a4e-9b7d-4c3f-8e21-5a0d9b3c7e14',
  // a product: GTIN 4006381333931 (valid check digit) under company prefix 4006381
  gtin: GTIN,
  product_name: 'Organic Rolled Oats',
  brand: 'Acme Foods',
  manufacturer: 'Acme Foods GmbH',
  'Product.description': 'Whole-grain rolled oats from organic farming, for porridge and muesli.',
  image_url: `https://cdn.acme.example/images/${GTIN}.jpg`,
  country_of_origin: 'DE',
  net_content: '500 g',
  net_content_value: 500,
  net_content_uom: 'GRM',
  length: 18,
  width: 12,
  height: 5,
  depth: 5,
  length_uom: 'CMT',
  width_uom: 'CMT',
  height_uom: 'CMT',
  depth_uom: 'CMT',
  gross_weight: 520,
  net_weight: 500,
  gross_weight_uom: 'GRM',
  net_weight_uom: 'GRM',
  gpc_brick_code: '10000282',
  gpc_class_code: '50221300',
  gpc_family_code: '50220000',
  gpc_segment_code: '50000000',
  ingredients_text: 'Rolled oats* (100 %). *organic. May contain traces of nuts.',
  usage_instructions: 'Store in a cool, dry place. Once opened, keep in an airtight container.',
  contains_allergens: ['gluten'],
  may_contain_allergens: ['nuts'],
  certifications: ['eu-organic'],
  exclude_allergens: ['peanuts'],
  exclude_substances: ['palm-oil'],
  slug: 'palm-oil',
  span: 'palm oil',
  confidence: 0.9,
  confidence_score: 0.95,
  field_confidence: { product_name: 0.95, brand: 0.95 },
  data_source: 'claimed',
  claim_verification_status: 'prefix_matched',
  ca_ab660: 'compliant',
  federal: 'compliant',
  notes: [],
  accepted: ['product_name', 'image_url'],
  'ContributionAccepted.status': 'queued for promotion',
  fields: {
    product_name: [
      {
        value: 'Organic Rolled Oats',
        source: 'claimed',
        confidence: 1,
        contributor_id: ORGANIZATION_ID,
        created: AT,
        canonical: true,
      },
    ],
  },
  metadata: { sku: 'OAT-500' },
  user_metadata: { team: 'catalog' },
  gs1_company_prefixes: ['4006381'],
  // people and organizations
  'Member.id': 'M9bWc4KzTq7NpHf2VgRxJs',
  user_email: 'ann@acme.example',
  user_name: 'Ann Example',
  owner_email: 'owner@acme.example',
  owner_name: 'Olivia Owner',
  role: 'editor',
  role_display: 'Editor',
  key: 'gck_live_3q2Xv9Zk4TbN7mRwYc8Hf5Jp2Ld6Gs1Ae0Ui4Ko9Mx',
  'ApiKey.name': 'CI pipeline',
  'ApiKey.description': 'Reads the catalog from the nightly export job',
  // retailers, offers
  'Retailer.name': 'Green Grocer',
  'Retailer.description': 'Organic groceries, online and in 12 stores.',
  website: 'https://greengrocer.example',
  gln: '4012345000009',
  // a key cannot set it (the admin token can): the example is what a key sends
  is_canonical: false,
  marketplace_regions: ['DE', 'AT'],
  price: '2.49',
  regular_price: '2.99',
  sale_price: '2.49 EUR',
  currency: 'EUR',
  link: 'https://greengrocer.example/p/organic-rolled-oats',
  item_id: 'GG-10442',
  'Offer.title': 'Organic Rolled Oats 500 g',
  'Offer.url': 'https://greengrocer.example/p/organic-rolled-oats',
  mapping: { id: 'sku', title: 'name', price: 'price_eur', gtin: 'ean' },
  'FeedRun.file': 'products.jsonl.gz',
  source: 'retailer-portal',
  sample: ['04006381000017'],
  category: 'grocery',
  // webhooks
  'WebhookEndpoint.url': 'https://hooks.acme.example/gtin-catalog',
  'WebhookEndpoint.label': 'Production receiver',
  disabled_reason: null,
  signing_secret: 'whsec_Zq4pX7Lb2Vn9Tw3Hk8Jc5Rf1Gm6Yd0Sa4Ue7Io2Bx',
  event_type: 'product.created',
  event_types: ['product.created', 'product.updated'],
  response_status: 200,
  latency_ms: 182,
  attempts: 1,
  since: '2025-03-13T00:00:00Z',
  // resolution rules
  link_type: 'gs1:pip',
  custom_url: 'https://acme.example/products/organic-rolled-oats',
  'ResolutionRule.title': 'Product information',
  media_type: 'text/html',
  hreflang: ['en'],
  section_anchor: 'nutrition',
  annual_start_mmdd: '12-01',
  annual_end_mmdd: '12-31',
  time_of_day_start: '08:00',
  time_of_day_end: '20:00',
  timezone: 'Europe/Berlin',
  days_of_week: [1, 2, 3, 4, 5],
  location_countries: ['DE', 'AT'],
  location_regions: ['US-CA'],
  location_cities: ['Berlin'],
  absolute_start_at: '2025-12-01T00:00:00Z',
  absolute_end_at: '2026-01-01T00:00:00Z',
  // a BATCH rule names its product and, in scope_id, the lot
  scope_type: 'BATCH',
  scope_id: 'LOT-2025-03',
  // a linkset, as the resolver serves it
  anchor: `https://id.acme.example/01/${GTIN}`,
  itemDescription: 'Organic Rolled Oats',
  href: 'https://acme.example/products/organic-rolled-oats',
  type: 'text/html',
  linkset: [
    {
      anchor: `https://id.acme.example/01/${GTIN}`,
      itemDescription: 'Organic Rolled Oats',
      'https://gs1.org/voc/pip': [
        {
          href: 'https://acme.example/products/organic-rolled-oats',
          title: 'Product information',
          type: 'text/html',
          hreflang: ['en'],
        },
      ],
      'https://gs1.org/voc/defaultLink': [
        {
          href: 'https://acme.example/products/organic-rolled-oats',
          title: 'Product information',
          type: 'text/html',
          hreflang: ['en'],
        },
      ],
    },
  ],
  resolverRoot: 'https://id.acme.example',
  supportedPrimaryKeys: ['01'],
  namespace: 'https://gs1.org/voc/',
  prefix: 'gs1:',
  nameOfList: 'ISO 3166-1 alpha-2 and ISO 3166-2',
  // advertising
  'Campaign.name': 'Spring oats launch',
  allowed_next_statuses: ['active'],
  campaign_name: 'Spring oats launch',
  budget: '5000.00',
  rate: '0.35',
  spend: '88.20',
  impressions: 12000,
  clicks: 252,
  ctr: '0.0210',
  effective_cpc: '0.35',
  effective_cpm: '7.35',
  start_date: '2025-04-01',
  end_date: '2025-06-30',
  period: '2025-04',
  period_start: '2025-04-01',
  period_end: '2025-04-30',
  gross_revenue: '1250.00',
  platform_fee: '187.50',
  platform_fee_rate: '0.15',
  retailer_share: '1062.50',
  payment_transfer_id: 'tr_1PxYz2AcmeFoods',
  // feeds, batches, search, pages
  page: 1,
  page_size: 25,
  total_count: 1,
  total_pages: 1,
  has_next: false,
  has_previous: false,
  error: null,
  reason: 'gtin: the check digit of 4006381333932 should be 1',
  input: '4006381333932',
  job_id: 'b3c1f0de-2a4b-4e8f-9c71-0d5e6a7b8c9d',
  template: 'a4-3x8',
  output: 'sheet',
  download_url: 'https://catalog.acme.example/products/api/v1/barcode/batch/B8kTq3VzNb2WpRf5HgXcJd/download',
  path: 'off/products.jsonl.gz',
  file_name: 'products.jsonl.gz',
  label: 'Oats 500 g',
  q: 'oats',
  query: 'oats',
  rank: 0.92,
  name: 'Acme Foods',
  url: 'https://acme.example/',
  status: 'ok',
  checks: { database: 'ok' },
}

const FORMAT_EXAMPLES: Record<string, unknown> = { 'date-time': AT, date: DAY, email: 'ann@acme.example' }

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

const TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  array: Array.isArray,
  object: isObject,
}

/** Whether `value` satisfies `schema` in the keywords the document uses (Redocly checks them all). */
export function fits(value: unknown, schema: unknown): boolean {
  if (!isObject(schema)) return true
  if (schema.$ref) return true
  if ('const' in schema && schema.const !== value) return false
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false
  for (const key of ['anyOf', 'oneOf'])
    if (Array.isArray(schema[key]) && !schema[key].some((s: unknown) => fits(value, s))) return false
  const types = schema.type === undefined ? [] : [schema.type].flat()
  if (types.length && !types.some((t: string) => TYPES[t]?.(value))) return false
  if (typeof value === 'string') {
    const length = [...value].length
    if (length > (schema.maxLength ?? Number.POSITIVE_INFINITY) || length < (schema.minLength ?? 0)) return false
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) return false
  }
  if (typeof value === 'number') {
    if (value > (schema.maximum ?? Number.POSITIVE_INFINITY) || value < (schema.minimum ?? Number.NEGATIVE_INFINITY))
      return false
  }
  if (Array.isArray(value)) {
    if (value.length > (schema.maxItems ?? Number.POSITIVE_INFINITY) || value.length < (schema.minItems ?? 0))
      return false
    if (schema.items && !value.every((v) => fits(v, schema.items))) return false
  }
  if (isObject(value) && isObject(schema.properties))
    for (const [k, v] of Object.entries(value)) if (schema.properties[k] && !fits(v, schema.properties[k])) return false
  return true
}

// ShortId's own example stands for any id: a field's name gives a better one
const GENERIC = JSON.stringify(ShortId.examples)
const hasExample = (schema: Json) =>
  schema.example !== undefined || ((schema.examples?.length ?? 0) > 0 && JSON.stringify(schema.examples) !== GENERIC)

/** The example of a field: by schema and name, then by name, then by format. */
function exampleFor(name: string, schema: Json, within: string | undefined): unknown {
  const candidates = [
    within ? FIELD_EXAMPLES[`${within}.${name}`] : undefined,
    FIELD_EXAMPLES[name],
    FORMAT_EXAMPLES[schema.format as string],
    ...(Array.isArray(schema.anyOf) ? schema.anyOf.map((b: Json) => FORMAT_EXAMPLES[b?.format as string]) : []),
  ]
  return candidates.find((c) => c !== undefined && fits(c, schema))
}

/**
 * Gives every field of `schema` (and below) that has none an example from FIELD_EXAMPLES;
 * `within` is the name of the component being walked.
 */
export function annotateExamples(schema: unknown, within?: string): void {
  if (Array.isArray(schema)) {
    for (const s of schema) annotateExamples(s, within)
    return
  }
  if (!isObject(schema)) return
  if (isObject(schema.properties))
    for (const [name, field] of Object.entries(schema.properties)) {
      if (!isObject(field)) continue
      if (!hasExample(field)) {
        const value = exampleFor(name, field, within)
        if (value !== undefined) field.examples = [value]
      }
    }
  for (const [key, value] of Object.entries(schema))
    if (!['examples', 'example', 'default', 'const', 'enum'].includes(key)) annotateExamples(value, within)
}

/** A parameter's example, as its field's would be. */
export function annotateParameter(parameter: Json): void {
  const schema = parameter.schema
  if (!isObject(schema) || hasExample(schema) || parameter.example !== undefined) return
  const value = exampleFor(parameter.name as string, schema, undefined)
  if (value !== undefined) schema.examples = [value]
}

/** An example of a whole body or response, put together from its fields' examples. */
export function mediaExample(schema: Json, doc: Json): unknown {
  return sample(schema as never, { skipReadOnly: false, skipWriteOnly: false, quiet: true }, doc)
}
