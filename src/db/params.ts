import { type SQL, sql } from 'drizzle-orm'

/** One array parameter of a PostgreSQL type (drizzle would spread a bare array into a list of parameters). */
export const arrayParam = (values: unknown[], type: 'text' | 'uuid' | 'float8' | 'timestamptz'): SQL =>
  sql`${sql.param(values)}::${sql.raw(type)}[]`
