import { getTableColumns, type SQL, sql, type Table } from 'drizzle-orm'

type ArrayType = 'text' | 'uuid' | 'float8' | 'timestamptz' | 'date' | 'int8' | 'numeric' | 'jsonb'

/**
 * One array parameter of a PostgreSQL type (drizzle would spread a bare array into a list of
 * parameters). For `jsonb`, pass each value already as JSON text.
 */
export const arrayParam = (values: unknown[], type: ArrayType): SQL => sql`${sql.param(values)}::${sql.raw(type)}[]`

/**
 * `unnest(…) as alias(columns…)`: many rows sent as one array parameter per column, for
 * `insert … select … from` it. A statement of a few parameters whatever the number of rows; a
 * multi-row VALUES of thousands of rows costs more to build than to run. Each column names its
 * type and how to read it from a row.
 */
export function unnestRows<R>(
  rows: readonly R[],
  alias: string,
  columns: Record<string, [ArrayType, (row: R) => unknown]>,
): SQL {
  const arrays = Object.values(columns).map(([type, read]) => arrayParam(rows.map(read), type))
  const names = Object.keys(columns).map((name) => sql.identifier(name))
  return sql`unnest(${sql.join(arrays, sql`, `)}) as ${sql.identifier(alias)}(${sql.join(names, sql`, `)})`
}

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
