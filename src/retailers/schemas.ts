import { t } from 'elysia'
import { Id, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Chars } from '../shared/schema-types'

// The retailer's fields, written and read with the same limits.
const Name = Chars(255)
const Website = Chars(2048, {
  pattern: '^(https?://[^\\s/?#]+[^\\s]*)?$',
  error: 'must be an absolute http(s) URL of at most 2048 characters, or empty',
})
const Gln = t.String({
  pattern: '^([0-9]{13})?$',
  error: 'must be 13 digits or empty',
  description: 'Global Location Number (13 digits) or empty',
})
const Regions = t.Array(
  t.String({ pattern: '^[A-Z]{2}(-[A-Z0-9]{1,3})?$', error: 'must be ISO 3166-1 alpha-2 or ISO 3166-2 codes' }),
  { maxItems: 250, uniqueItems: true },
)
const Category = Chars(255)

export const Retailer = t.Object(
  {
    id: ShortId,
    name: Name,
    created: t.String({ format: 'date-time' }),
    metadata: MetadataOut,
    is_online: t.Boolean(),
    is_physical: t.Boolean(),
    website: Website,
    gln: Gln,
    is_canonical: t.Boolean(),
    organization_id: ShortId,
    marketplace_regions: Regions,
    category: Category,
    is_active: t.Boolean(),
  },
  { 'x-schema-name': 'Retailer' },
)

const fields = {
  metadata: t.Optional(MetadataIn),
  is_online: t.Optional(t.Boolean()),
  is_physical: t.Optional(t.Boolean()),
  website: t.Optional(Website),
  gln: t.Optional(Gln),
  is_canonical: t.Optional(t.Boolean({ description: 'settable only with the X-Admin-Token header' })),
  marketplace_regions: t.Optional(Regions),
  category: t.Optional(Category),
  is_active: t.Optional(t.Boolean()),
}

// What a key sends: is_canonical is the admin token's alone (a key that names it is 403)
const EXAMPLE = {
  name: 'Green Grocer',
  website: 'https://greengrocer.example',
  gln: '4012345000009',
  is_online: true,
  is_physical: true,
  marketplace_regions: ['DE', 'AT'],
  category: 'grocery',
  metadata: { region: 'north' },
}

export const RetailerCreate = t.Object(
  { name: Chars(255, { minLength: 1 }), ...fields },
  { additionalProperties: false, examples: [EXAMPLE] },
)
export const RetailerPatch = t.Object(
  { name: t.Optional(Chars(255, { minLength: 1 })), ...fields },
  { additionalProperties: false, examples: [{ marketplace_regions: ['DE', 'AT', 'CH'], is_physical: false }] },
)

export const RetailerQuery = t.Composite([
  PageQuery,
  t.Object({
    organization_id: t.Optional(Id('organization_id')),
    search: t.Optional(Chars(255, { minLength: 1, description: 'case-insensitive substring of the name' })),
  }),
])

export const RetailerParams = t.Object({ id: Id('id') })
