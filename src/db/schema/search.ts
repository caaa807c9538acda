import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import { tsvector } from './columns'

/**
 * The search feature's documents (migration 0024), one row per product, brand and retailer, keyed
 * by its id; built by `src/search/documents.ts` from the catalog rows, never written by anyone else:
 * - `search_vector`: the weighted full-text document (a brand's is its name);
 * - `title_vector`: the part that names the row (a product's name, brand and GTIN);
 * - `title_len`: the number of distinct words of the name (a product's with its brand), the rank's norm;
 * - `title_keys` (products): the title's words tagged with its length (`catalog_title_keys`, migration 0016);
 * - `search_text`: the folded name, for substring and typo matching (trigram index);
 * - copies of what filters and visibility test (a product's allergens, certifications and confident
 *   substances; a retailer's organization and flags), so a search reads one row per hit.
 */
export const searchProducts = pgTable(
  'search_products',
  {
    id: uuid().primaryKey(),
    titleLen: smallint().notNull(),
    searchVector: tsvector().notNull(),
    titleVector: tsvector().notNull(),
    titleKeys: tsvector().notNull(),
    searchText: text().notNull(),
    containsAllergens: text().array().notNull(),
    certifications: text().array().notNull(),
    confidentSubstances: text().array().notNull(),
  },
  (table) => [
    index('search_products_search_vector_idx').using('gin', table.searchVector),
    index('search_products_search_text_idx').using('gin', table.searchText.op('gin_trgm_ops')),
    index('search_products_title_keys_idx').using('gin', table.titleKeys),
    // INCLUDE (title_vector, search_text) in the migration: walked in title order without the table
    index('search_products_title_order_idx').on(table.titleLen, table.id),
  ],
)

export const searchBrands = pgTable(
  'search_brands',
  {
    id: uuid().primaryKey(),
    titleLen: smallint().notNull(),
    searchVector: tsvector().notNull(),
    searchText: text().notNull(),
  },
  (table) => [
    index('search_brands_search_vector_idx').using('gin', table.searchVector),
    index('search_brands_search_text_idx').using('gin', table.searchText.op('gin_trgm_ops')),
    index('search_brands_title_order_idx').on(table.titleLen, table.id),
  ],
)

export const searchRetailers = pgTable(
  'search_retailers',
  {
    id: uuid().primaryKey(),
    organizationId: uuid().notNull(),
    isActive: boolean().notNull(),
    isCanonical: boolean().notNull(),
    titleLen: smallint().notNull(),
    searchVector: tsvector().notNull(),
    titleVector: tsvector().notNull(),
    searchText: text().notNull(),
  },
  (table) => [
    index('search_retailers_search_vector_idx').using('gin', table.searchVector),
    index('search_retailers_search_text_idx').using('gin', table.searchText.op('gin_trgm_ops')),
    index('search_retailers_title_vector_idx').using('gin', table.titleVector),
    index('search_retailers_title_order_idx').on(table.titleLen, table.id),
  ],
)

/**
 * The words of every searchable name (folded, 3 characters or more, not all digits), added by the
 * documents' writer with the documents. Typo matching looks a query's word up here by trigram
 * similarity and searches again with the words it finds. A word that no longer names anything stays
 * until `search reindex` rebuilds the list; it finds nothing.
 */
export const searchWords = pgTable('search_words', { word: text().primaryKey() }, (table) => [
  index('search_words_trgm_idx').using('gin', table.word.op('gin_trgm_ops')),
])

/**
 * Rows whose documents are out of date, marked one by one: in Typesense mode by every write through
 * the API (`refreshSearchDocuments`), for the copy there; the `search.documents` drain rebuilds them
 * at once, oldest mark first, and removes the marks it took.
 */
export const searchIndexPending = pgTable(
  'search_index_pending',
  {
    collection: text({ enum: ['product', 'brand', 'retailer'] }).notNull(),
    id: uuid().notNull(),
    marked: timestamp({ withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.collection, table.id] }),
    index('search_index_pending_marked_idx').on(table.marked),
  ],
)

/**
 * A bulk writer's marks (migration 0041): one row per marking statement (a feed chunk's new or
 * changed products), its rows' ids as an array, not a row each. Drained whole, oldest first, once
 * the bulk writers have gone quiet (marks.ts). `size`: how many ids, so that the waiting marks are
 * counted without reading the arrays.
 */
export const searchBulkMarks = pgTable(
  'search_bulk_marks',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    collection: text({ enum: ['product', 'brand', 'retailer'] }).notNull(),
    ids: uuid().array().notNull(),
    size: integer().notNull(),
    marked: timestamp({ withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
  },
  (table) => [index('search_bulk_marks_marked_idx').on(table.marked)],
)
