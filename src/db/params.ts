import { getTableColumns, type SQL, sql, type Table } from 'drizzle-orm'

type ArrayType = 'text' | 'uuid' | 'float8' | 'timestamptz' | 'date' | 'int8' | 'numeric' | 'jsonb'

/** An element arrayLiteral writes itself: what pg turns into text with its own toString. */
type Plain = string | number | bigint | boolean | null | undefined

const isPlain = (v: unknown): v is Plain => v == null || (typeof v !== 'object' && typeof v !== 'function')

/** One element as PostgreSQL's array input reads it: quoted, backslash and double quote escaped. */
function element(value: Plain): string {
  if (value == null) return 'NULL'
  const text = typeof value === 'string' ? value : String(value)
  // most elements (ids, numbers, names) hold neither character: no replacement to run
  if (text.indexOf('"') === -1 && text.indexOf('\\') === -1) return `"${text}"`
  return `"${text.replace(/[\\"]/g, '\\$&')}"`
}

/**
 * The array literal of `count` elements read by `at` (`{"a","b",NULL}`), byte for byte what pg's
 * prepareValue writes for a JS array of strings, numbers and nulls, or null when an element is of
 * another kind (a Date, an object, a nested array: pg's own conversion then). Hand-written for a
 * measured need: pg's (arrayString, escapeElement: two regular-expression replacements per element)
 * was the largest single cost of the feed chunk job's own in a server profile of an import (969
 * samples of about 16,000 outside the collector, 6 %; a chunk sends a dozen column arrays of 2,500
 * elements), on the main thread that sets the import's pace. Alone: 0.07-0.30 µs an element for
 * pg's, 0.02-0.10 for this (ids, names, numbers).
 */
function literalOf(count: number, at: (n: number) => unknown): string | null {
  let out = '{'
  for (let n = 0; n < count; n++) {
    const value = at(n)
    if (!isPlain(value)) return null
    out += n === 0 ? element(value) : `,${element(value)}`
  }
  return `${out}}`
}

/** arrayLiteral of a list (exported for the unit test against pg's own output). */
export const arrayLiteral = (values: readonly unknown[]) => literalOf(values.length, (n) => values[n])

/**
 * One array parameter of a PostgreSQL type (drizzle would spread a bare array into a list of
 * parameters). For `jsonb`, pass each value already as JSON text.
 */
export const arrayParam = (values: unknown[], type: ArrayType): SQL =>
  sql`${sql.param(arrayLiteral(values) ?? values)}::${sql.raw(type)}[]`

/**
 * arrayParam of what `read` gives for each row, read once per row (a reader may have effects: it
 * is never called twice for a row, even when the literal gives up and pg converts the values).
 */
export function columnParam<R>(rows: readonly R[], read: (row: R) => unknown, type: ArrayType): SQL {
  const values: unknown[] = []
  const literal = literalOf(rows.length, (n) => {
    const value = read(rows[n]!)
    values.push(value)
    return value
  })
  if (literal === null) for (let n = values.length; n < rows.length; n++) values.push(read(rows[n]!))
  return sql`${sql.param(literal ?? values)}::${sql.raw(type)}[]`
}

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
  const arrays = Object.values(columns).map(([type, read]) => columnParam(rows, read, type))
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
