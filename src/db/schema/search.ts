import { index, pgTable, text } from 'drizzle-orm/pg-core'

/**
 * The words of every searchable name (folded, 3 characters or more, not all digits), kept by
 * statement triggers on products, brands and retailers (migration 0010). Typo matching looks a
 * query's word up here by trigram similarity and searches again with the words it finds. A word
 * that no longer names anything stays until `search reindex` rebuilds the list; it finds nothing.
 */
export const searchWords = pgTable('search_words', { word: text().primaryKey() }, (table) => [
  index('search_words_trgm_idx').using('gin', table.word.op('gin_trgm_ops')),
])
