import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { ALLERGENS, CERTIFICATION_SLUGS, SUBSTANCE_SLUGS } from '../catalog/ingredients/analyze'
import { ShortId } from '../shared/ids'
import { Chars, Enum, QueryInteger } from '../shared/schema-types'
import { COLLECTIONS } from './types'

/**
 * One of the known slugs of a filter: allergens, certifications and substances alike, an unknown
 * slug is 422 naming the parameter and the slug (`x-unknown`), never a filter that silently matches
 * nothing (a misspelt `exclude_substances` would otherwise drop nothing).
 */
const KnownSlug = (what: string, field: string, slugs: readonly string[]) =>
  t.Unsafe<string>(
    t.Union(
      slugs.map((s) => t.Literal(s)),
      { 'x-field': field, 'x-unknown': what },
    ),
  )
const Repeatable = (item: ReturnType<typeof KnownSlug>, description: string) =>
  t.Optional(
    t.Array(item, { maxItems: 20, description: `${description}; repeat the parameter for several (at most 20)` }),
  )

/** The catalog filters, shared by search (query parameters) and scoped search keys (a JSON body). */
const SearchFilters = {
  exclude_allergens: Repeatable(
    KnownSlug('allergen', 'exclude_allergens', ALLERGENS),
    'drop products whose contains_allergens has any of these',
  ),
  certifications: Repeatable(
    KnownSlug('certification', 'certifications', [...CERTIFICATION_SLUGS].sort()),
    'required certifications: drop products lacking any of these',
  ),
  exclude_substances: Repeatable(
    KnownSlug('substance', 'exclude_substances', SUBSTANCE_SLUGS),
    'drop products with a confident (>= 0.8) match of any of these substances; weaker matches stay and are listed in substance_flags. E-number ids (`e250`) or their name ids (`sodium-nitrite`)',
  ),
}

export const SearchQuery = t.Object({
  q: Chars(255, { minLength: 1, description: 'the search text, 1-255 characters, web-search syntax' }),
  type: t.Optional(
    t.Array(Enum(COLLECTIONS, { 'x-field': 'type' }), {
      maxItems: 3,
      description: 'restrict to these collections (repeatable); omitted searches all three',
    }),
  ),
  limit: t.Optional(
    QueryInteger('limit', {
      minimum: 1,
      maximum: 2_147_483_647,
      description: 'maximum rows, default 20; values above 100 are capped at 100',
    }),
  ),
  ...SearchFilters,
})

const Substance = t.Object({ slug: t.String(), span: t.String(), confidence: t.Number() })
const Base = {
  id: ShortId,
  name: t.String(),
  rank: t.Number({ description: 'relevance, 0-1; an exact GTIN match is 1' }),
  match: Enum(['gtin', 'fulltext', 'substring', 'fuzzy'], {
    description: 'the tier that matched: exact GTIN, full text, substring fallback, or typo-tolerant similarity',
  }),
}
export const SearchRow = t.Union([
  t.Object({
    type: t.Literal('product'),
    ...Base,
    gtin: t.String({ description: 'GTIN-14' }),
    brand: t.String(),
    image_url: t.String(),
    contains_allergens: t.Array(t.String()),
    certifications: t.Array(t.String()),
    substance_flags: t.Array(Substance, {
      description: 'weak (< 0.8) matches of excluded substances; empty without exclude_substances',
    }),
  }),
  t.Object({ type: t.Literal('brand'), ...Base, product_count: Type.Integer() }),
  t.Object({
    type: t.Literal('retailer'),
    ...Base,
    website: t.String(),
    is_online: t.Boolean(),
    is_physical: t.Boolean(),
  }),
])

export const SearchResponse = t.Object({
  query: t.String({ description: 'the query text as sent' }),
  total_count: Type.Integer({ description: 'the number of rows returned (not of the corpus)' }),
  results: t.Array(SearchRow),
})

const COLLECTION_NAMES = COLLECTIONS.map((c) => `${c}s`)

export const SearchKeyRequest = t.Object(
  {
    type: t.Optional(
      t.Array(Enum(COLLECTIONS, { 'x-field': 'type' }), {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description: 'the collections to mint keys for; omitted: all three',
      }),
    ),
    ...SearchFilters,
    expires_in: t.Optional(
      t.Integer({
        minimum: 60,
        maximum: 86_400,
        default: 3600,
        description: 'seconds until the keys expire (60 to 86400, default 3600)',
      }),
    ),
  },
  { additionalProperties: false },
)

export const SearchKeys = t.Object({
  url: t.String({ description: "Typesense's address for browsers (TYPESENSE_PUBLIC_URL, else TYPESENSE_URL)" }),
  expires_at: t.String({ format: 'date-time' }),
  keys: t.Array(
    t.Object({
      type: Enum(COLLECTIONS),
      collection: Enum(COLLECTION_NAMES, { description: 'the Typesense collection the key is for' }),
      key: t.String({ description: 'the scoped search-only key: use it only on this collection' }),
      parameters: t.Object(
        {
          filter_by: t.Optional(t.String()),
          expires_at: Type.Integer({ description: 'Unix seconds' }),
        },
        { description: 'the search parameters embedded in the key (Typesense enforces them)' },
      ),
    }),
  ),
})
