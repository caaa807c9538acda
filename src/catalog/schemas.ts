import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { CLAIM_STATUSES, DATA_SOURCES } from '../db/schema/catalog'
import { Id, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Chars, Enum } from '../shared/schema-types'
import { ALL_FIELDS, CONTRIBUTABLE_FIELDS, inputSchemas, outputSchemas } from './fields'
import { Recall } from './recall-schemas'

/** Writable product fields (create and patch), contract §5: the stored fields, brand and metadata. */
const fields = {
  ...inputSchemas(ALL_FIELDS),
  brand: t.Optional(Chars(255)),
  metadata: t.Optional(MetadataIn),
}

export const ProductCreate = t.Object(
  {
    gtin: t.String({
      minLength: 8,
      maxLength: 14,
      description: 'GTIN-8/12/13/14, separators allowed; normalized to GTIN-14',
    }),
    organization_id: t.Optional(t.Union([Id('organization_id'), t.Null()])),
    ...fields,
  },
  { additionalProperties: false },
)
export type ProductCreate = typeof ProductCreate.static

export const ProductPatch = t.Object(fields, { additionalProperties: false })
export type ProductPatch = typeof ProductPatch.static

export const UnclaimBody = t.Optional(
  t.Union([
    t.Object(
      { organization_id: t.Optional(t.Union([Id('organization_id'), t.Null()])) },
      { additionalProperties: false },
    ),
  ]),
)

export const Contribution = t.Object(
  {
    fields: t.Object(inputSchemas(CONTRIBUTABLE_FIELDS), { additionalProperties: false, minProperties: 1 }),
  },
  { additionalProperties: false },
)
export const ContributionAccepted = t.Object({ gtin: t.String(), accepted: t.Array(t.String()), status: t.String() })

export const Product = t.Object(
  {
    id: ShortId,
    gtin: t.String({ pattern: '^\\d{14}$' }),
    is_claimed: t.Boolean(),
    data_source: Enum(DATA_SOURCES),
    confidence_score: Type.Number({ minimum: 0, maximum: 1 }),
    field_confidence: t.Record(t.String(), Type.Number({ minimum: 0, maximum: 1 })),
    date_label_compliance: t.Object({ ca_ab660: t.String(), federal: t.String(), notes: t.Array(t.String()) }),
    metadata: MetadataOut,
    brand: Chars(255),
    ...outputSchemas(),
    owner_id: t.Union([ShortId, t.Null()]),
    claim_verification_status: t.Union([Enum(CLAIM_STATUSES), t.Null()]),
    contains_allergens: t.Array(t.String()),
    may_contain_allergens: t.Array(t.String()),
    certifications: t.Array(t.String()),
    substances: t.Array(t.Object({ slug: t.String(), span: t.String(), confidence: Type.Number() })),
    recall: Recall,
    created: t.String({ format: 'date-time' }),
    modified: t.String({ format: 'date-time' }),
  },
  { 'x-schema-name': 'Product' },
)

export const ProductQuery = t.Composite([
  PageQuery,
  t.Object({
    organization_id: t.Optional(Id('organization_id')),
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
