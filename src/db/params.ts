import { getTableColumns, type SQL, sql, type Table } from 'drizzle-orm'

/** One array parameter of a PostgreSQL type (drizzle would spread a bare array into a list of parameters). */
export const arrayParam = (
  values: unknown[],
  type: 'text' | 'uuid' | 'float8' | 'timestamptz' | 'date' | 'int8' | 'numeric',
): SQL => sql`${sql.param(values)}::${sql.raw(type)}[]`

/**
 * The `set` of an upsert that takes the proposed row's values (`excluded.<column>`) for the named
 * columns of the table.
 */
export function fromExcluded<T extends Table, K extends keyof T['_']['columns'] & string>(table: T, keys: K[]) {
  const columns = getTableColumns(table)
  // the schema names columns in camelCase; the database (drizzle casing: snake_case) in snake_case
  const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  return Object.fromEntries(keys.map((k) => [k, sql.raw(`excluded.${snake(columns[k]!.name)}`)])) as Record<K, SQL>
}
