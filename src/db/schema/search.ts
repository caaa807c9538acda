import { index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core'

/**
 * The words of every searchable name (folded, 3 characters or more, not all digits), kept by
 * statement triggers on products, brands and retailers (migration 0010). Typo matching looks a
 * query's word up here by trigram similarity and searches again with the words it finds. A word
 * that no longer names anything stays until `search reindex` rebuilds the list; it finds nothing.
 */
export const searchWords = pgTable('search_words', { word: text().primaryKey() }, (table) => [
  index('search_words_trgm_idx').using('gin', table.word.op('gin_trgm_ops')),
])

/**
 * Rows whose Typesense documents are out of date (Typesense mode): marked by the `search-index`
 * event consumer in the event's transaction, drained in batches by the `search.index` queue.
 */
export const searchIndexPending = pgTable(
  'search_index_pending',
  {
    collection: text({ enum: ['product', 'brand', 'retailer'] }).notNull(),
    id: uuid().notNull(),
    marked: timestamp({ withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.collection, table.id] })],
)
