import { bigint, integer, pgTable, varchar } from 'drizzle-orm/pg-core'

/**
 * Shared rate-limit counters (rate-limiter-flexible's PostgreSQL store, `src/http/rate-limit.ts`):
 * one row per key and window, so every API process on the database counts together. The table's
 * shape is the library's own.
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar({ length: 255 }).primaryKey(),
  points: integer().notNull().default(0),
  expire: bigint({ mode: 'number' }),
})
