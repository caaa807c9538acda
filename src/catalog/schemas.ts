import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { CLAIM_STATUSES, DATA_SOURCES, UOMS } from '../db/schema/catalog'
import { IdInput, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Enum } from '../shared/schema-types'

// Plain TypeBox numbers: no string coercion, and no transform on responses.
const Measure = Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { error: 'must be a number >= 0 or null' })
const Uom = t.String({ maxLength: 10, description: 'UN/CEFACT Rec. 20/21 code' })
const Gpc = t.String({ maxLength: 8, pattern: '^([0-9]{8})?$', error: 'must be 8 digits or empty' })

/** Writable product fields (create and patch), contract §5. */
const fields = {
  product_name: t.Optional(t.String({ maxLength: 255 })),
  description: t.Optional(t.String({ maxLength: 10_000 })),
  country_of_origin: t.Optional(
    t.String({ maxLength: 2, pattern: '^([A-Za-z]{2})?$', error: 'must be an ISO 3166-1 alpha-2 code or empty' }),
  ),
  net_content: t.Optional(t.String({ maxLength: 100 })),
  ingredients_text: t.Optional(t.String({ maxLength: 10_000 })),
  usage_instructions: t.Optional(t.String({ maxLength: 2_000 })),
  metadata: t.Optional(MetadataIn),
  brand: t.Optional(t.String({ maxLength: 255 })),
  manufacturer: t.Optional(t.String({ maxLength: 255 })),
  image_url: t.Optional(
    t.String({
      maxLength: 2048,
      pattern: '^(https?://[^\\s/?#]+[^\\s]*)?$',
      error: 'must be an absolute http(s) URL of at most 2048 characters, or empty',
    }),
  ),
  net_content_value: t.Optional(Measure),
  net_content_uom: t.Optional(
    Type.Union([Enum(UOMS), Type.Null()], { error: `must be one of ${UOMS.join(', ')}, or null` }),
  ),
  length: t.Optional(Measure),
  width: t.Optional(Measure),
  height: t.Optional(Measure),
  depth: t.Optional(Measure),
  length_uom: t.Optional(Uom),
  width_uom: t.Optional(Uom),
  height_uom: t.Optional(Uom),
  depth_uom: t.Optional(Uom),
  gross_weight: t.Optional(Measure),
  net_weight: t.Optional(Measure),
  gross_weight_uom: t.Optional(Uom),
  net_weight_uom: t.Optional(Uom),
  gpc_brick_code: t.Optional(Gpc),
  gpc_class_code: t.Optional(Gpc),
  gpc_family_code: t.Optional(Gpc),
  gpc_segment_code: t.Optional(Gpc),
}

export const ProductCreate = t.Object(
  {
    gtin: t.String({
      minLength: 8,
      maxLength: 14,
      description: 'GTIN-8/12/13/14, separators allowed; normalized to GTIN-14',
    }),
    organization_id: t.Optional(t.Union([IdInput, t.Null()])),
    ...fields,
  },
  { additionalProperties: false },
)
export type ProductCreate = typeof ProductCreate.static

export const ProductPatch = t.Object(fields, { additionalProperties: false })
export type ProductPatch = typeof ProductPatch.static

export const UnclaimBody = t.Optional(
  t.Union([t.Object({ organization_id: t.Optional(t.Union([IdInput, t.Null()])) }, { additionalProperties: false })]),
)

/** Crowd-contributable fields. */
export const CONTRIBUTABLE = [
  'product_name',
  'manufacturer',
  'description',
  'image_url',
  'country_of_origin',
  'net_content',
  'ingredients_text',
  'usage_instructions',
] as const
export const Contribution = t.Object(
  {
    fields: t.Object(
      Object.fromEntries(CONTRIBUTABLE.map((f) => [f, fields[f]])) as Pick<
        typeof fields,
        (typeof CONTRIBUTABLE)[number]
      >,
      { additionalProperties: false, minProperties: 1 },
    ),
  },
  { additionalProperties: false },
)
export const ContributionAccepted = t.Object({ gtin: t.String(), accepted: t.Array(t.String()), status: t.String() })

const Num = Type.Union([Type.Number(), Type.Null()])

export const Product = t.Object(
  {
    id: ShortId,
    gtin: t.String({ pattern: '^\\d{14}$' }),
    product_name: t.String(),
    is_claimed: t.Boolean(),
    data_source: Enum(DATA_SOURCES),
    confidence_score: Type.Number({ minimum: 0, maximum: 1 }),
    field_confidence: t.Record(t.String(), Type.Number({ minimum: 0, maximum: 1 })),
    date_label_compliance: t.Object({ ca_ab660: t.String(), federal: t.String(), notes: t.Array(t.String()) }),
    metadata: MetadataOut,
    brand: t.String(),
    manufacturer: t.String(),
    description: t.String(),
    image_url: t.String(),
    country_of_origin: t.String(),
    net_content: t.String(),
    net_content_value: Num,
    net_content_uom: t.Union([
      Enum([...UOMS, ''], { description: 'UN/CEFACT unit code; empty on legacy records' }),
      t.Null(),
    ]),
    owner_id: t.Union([ShortId, t.Null()]),
    claim_verification_status: t.Union([Enum(CLAIM_STATUSES), t.Null()]),
    length: Num,
    width: Num,
    height: Num,
    depth: Num,
    length_uom: t.String(),
    width_uom: t.String(),
    height_uom: t.String(),
    depth_uom: t.String(),
    gross_weight: Num,
    net_weight: Num,
    gross_weight_uom: t.String(),
    net_weight_uom: t.String(),
    gpc_brick_code: t.String(),
    gpc_class_code: t.String(),
    gpc_family_code: t.String(),
    gpc_segment_code: t.String(),
    ingredients_text: t.String(),
    usage_instructions: t.String(),
    contains_allergens: t.Array(t.String()),
    may_contain_allergens: t.Array(t.String()),
    certifications: t.Array(t.String()),
    substances: t.Array(t.Object({ slug: t.String(), span: t.String(), confidence: Type.Number() })),
    created: t.String({ format: 'date-time' }),
    modified: t.String({ format: 'date-time' }),
  },
  { 'x-schema-name': 'Product' },
)

export const ProductQuery = t.Composite([
  PageQuery,
  t.Object({
    organization_id: t.Optional(IdInput),
    claimed: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { error: 'must be true or false' })),
  }),
])

export const GtinParams = t.Object({ gtin: t.String({ minLength: 1, maxLength: 32, description: 'GTIN in any form' }) })

export const Provenance = t.Object({
  gtin: t.String(),
  fields: t.Record(
    t.String(),
    t.Array(
      t.Object({
        value: t.Unknown(),
        source: t.String(),
        confidence: Type.Number(),
        contributor_id: t.Union([ShortId, t.Null()]),
        created: t.String({ format: 'date-time' }),
        canonical: t.Boolean(),
      }),
    ),
  ),
})
