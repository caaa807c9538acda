import { type SQL, sql } from 'drizzle-orm'
import { value } from './statements'
import type { Collection, SearchInput } from './types'

/**
 * Where each collection is searched: its documents' table (`documents.ts`), the columns of its
 * title-ordered covering index (`<table>_title_order_idx`: title_len, id, the title's tsvector and
 * the folded name), its whole document, and the conditions only the document row can answer
 * (filters, visibility: copies of the catalog row's values in the document).
 */
export type Source = {
  collection: Collection
  table: SQL
  /** the tsvector of the title, included in the covering index */
  title: string
  /** the tsvector of the whole document, or null when the title is the whole document */
  document: string | null
  /**
   * conditions on the table row `h`, or null when there are none; the input says which filters are
   * set, their values are the placeholders of `filterValues`
   */
  row: (input: SearchInput) => SQL | null
  /**
   * whether the collection is small enough (tens of thousands of rows) that asking its GIN index
   * whether any title matches at all costs less than a title walk that finds nothing: then the walk
   * starts only when one does (most queries match no brand or retailer)
   */
  askFirst: boolean
}

/** The filters' values, by the placeholder names the sources' conditions use. */
export const filterValues = (input: SearchInput) => ({
  allergens: input.excludeAllergens,
  certifications: input.certifications,
  substances: input.excludeSubstances,
  organization: input.organizationId,
})
/** Which filters are set: part of a statement's key (`statements.ts`). */
export const filterShape = (input: SearchInput) =>
  [
    input.excludeAllergens.length > 0 ? 'a' : '',
    input.certifications.length > 0 ? 'c' : '',
    input.excludeSubstances.length > 0 ? 's' : '',
    input.organizationId ? 'o' : '',
  ].join('')

const texts = (name: string) => sql`${value(name)}::text[]`

function productConditions(input: SearchInput): SQL | null {
  const parts: SQL[] = []
  if (input.excludeAllergens.length > 0) parts.push(sql`not (h.contains_allergens && ${texts('allergens')})`)
  if (input.certifications.length > 0) parts.push(sql`h.certifications @> ${texts('certifications')}`)
  // the document lists the slugs of its confident (>= CONFIDENT) substance matches
  if (input.excludeSubstances.length > 0) parts.push(sql`not (h.confident_substances && ${texts('substances')})`)
  return parts.length > 0 ? sql.join(parts, sql` and `) : null
}

export const SOURCES: Record<Collection, Source> = {
  product: {
    collection: 'product',
    table: sql.raw('search_products'),
    title: 'title_vector',
    document: 'search_vector',
    row: productConditions,
    askFirst: false,
  },
  brand: {
    collection: 'brand',
    table: sql.raw('search_brands'),
    title: 'search_vector',
    document: null,
    row: () => null,
    askFirst: true,
  },
  retailer: {
    collection: 'retailer',
    table: sql.raw('search_retailers'),
    title: 'title_vector',
    document: 'search_vector',
    row: (input) =>
      input.organizationId
        ? sql`h.is_active and (h.is_canonical or h.organization_id = ${value('organization')}::uuid)`
        : sql`h.is_active and h.is_canonical`,
    askFirst: true,
  },
}
