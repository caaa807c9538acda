import { type SQL, sql } from 'drizzle-orm'
import { FIELD_COLUMNS, type ProductField, SEARCH_FIELDS } from '../catalog/fields'

/**
 * What each collection is searched by, as the SQL of stored generated columns (so a change is
 * searchable the moment its transaction commits, and the expressions can be indexed):
 * - `search_vector`: the full-text document, in the accent-folding `catalog` configuration. A
 *   product's comes from the searchable fields of the product field list with their weights, plus
 *   its brand's name (B) and its GTIN, as stored and without leading zeros (A).
 * - `search_text`: the folded name (a product's with its brand), for substring and typo matching
 *   through a trigram index.
 * - `title_vector`: the part of the document that names the row (weights A and B: a product's name,
 *   brand and GTIN; a retailer's name). A brand's whole document is its name.
 * - `title_len`: the number of distinct words of the name (a product's with its brand). Rows whose
 *   title matches are ordered by it: the fewer other words, the closer the match (`src/search/rank.ts`).
 * - `title_keys` (products): the title's words, each tagged with the title's length (`5 peanut`;
 *   lengths from TITLE_BUCKETS up share one tag), so one GIN lookup finds the title matches of one
 *   length without visiting the others (`catalog_title_keys`, migration 0016; `src/search/postgres.ts`).
 */

/** The SQL column of a product field (drizzle's snake_case of its property). */
export const fieldColumn = (field: ProductField) => FIELD_COLUMNS[field].replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const weighted = (expression: string, weight: string) =>
  `setweight(to_tsvector('catalog'::regconfig, ${expression}), '${weight}')`

export const PRODUCT_DOCUMENT_PARTS = [
  ...SEARCH_FIELDS.map((f) => ({ expression: `"${fieldColumn(f.name)}"`, weight: f.weight })),
  { expression: '"brand_name"', weight: 'B' },
  { expression: `"gtin"::text || ' ' || ltrim("gtin", '0')`, weight: 'A' },
]

export const productSearchVector: SQL = sql.raw(
  PRODUCT_DOCUMENT_PARTS.map((p) => weighted(p.expression, p.weight)).join(' || '),
)
const TITLE_WEIGHTS = new Set(['A', 'B'])
const titleVector = PRODUCT_DOCUMENT_PARTS.filter((p) => TITLE_WEIGHTS.has(p.weight))
  .map((p) => weighted(p.expression, p.weight))
  .join(' || ')
export const productTitleVector: SQL = sql.raw(titleVector)
const wordCount = (expression: string) => `least(length(to_tsvector('catalog'::regconfig, ${expression})), 32767)`
const productWords = wordCount(`"product_name"::text || ' ' || "brand_name"::text`)
export const productTitleLength: SQL = sql.raw(productWords)
export const nameTitleLength: SQL = sql.raw(wordCount(`"name"::text`))
/** Titles of this many words or more share one tag in `title_keys` (`catalog_title_keys` in migration 0016). */
export const TITLE_BUCKETS = 16
export const productTitleKeys: SQL = sql.raw(`catalog_title_keys(${titleVector}, ${productWords})`)
export const productSearchText: SQL = sql.raw(`catalog_fold("product_name"::text || ' ' || "brand_name"::text)`)

export const nameSearchVector: SQL = sql.raw(weighted('"name"', 'A'))
export const retailerSearchVector: SQL = sql.raw(`${weighted('"name"', 'A')} || ${weighted('"category"', 'C')}`)
export const nameSearchText: SQL = sql.raw(`catalog_fold("name"::text)`)
