import { bigint, bigserial, pgTable } from 'drizzle-orm/pg-core'

/**
 * The number of products as a sum of deltas, one row per statement that inserted or deleted
 * products (migration 0028: statement triggers on products write it; rows are folded now and
 * then). Read by the unfiltered product list instead of counting every row.
 */
export const productCountDeltas = pgTable('product_count_deltas', {
  id: bigserial({ mode: 'number' }).primaryKey(),
  delta: bigint({ mode: 'number' }).notNull(),
})
