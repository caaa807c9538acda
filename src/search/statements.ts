import { fillPlaceholders, type SQL, sql } from 'drizzle-orm'
import { PgDialect, PgTransaction } from 'drizzle-orm/pg-core'
import { preparedPool } from '../db/client'
import type { Executor } from '../db/tx'

/**
 * Search statements are built once per shape of query, not once per request. A statement's
 * variable values (the words searched, the filters, `limit`) enter it only as named placeholders
 * (`value('limit')`), so its text depends on the query's shape alone (how many clauses and terms,
 * which filters, which collections): the shape is the statement's key, and a request only fills
 * the placeholders from its `Values`. Building a statement took longer than running a common one.
 */
export type Values = Record<string, unknown>

/** A placeholder for the value `name` of the request's `Values`. */
export const value = (name: string): SQL => sql`${sql.placeholder(name)}`

type Built = { name: string | undefined; text: string; params: unknown[] }
const dialect = new PgDialect()
/**
 * Built statements by key; past MAX_STATEMENTS keys, statements are built per request and sent
 * unnamed. The same idea as `db/prepared.ts`, which drizzle's prepared queries use on the main pool;
 * search needs its own: its statements run on the search pool, and their keys come from what callers
 * type, so their number is bounded.
 */
const built = new Map<string, Built>()
const MAX_STATEMENTS = 256

function statement(key: string, build: () => SQL): Built {
  const cached = built.get(key)
  if (cached) return cached
  const { sql: text, params } = dialect.sqlToQuery(build())
  if (built.size >= MAX_STATEMENTS) return { name: undefined, text, params }
  const made = { name: `search_${built.size}`, text, params }
  built.set(key, made)
  return made
}

/**
 * Runs the search statement of `key` (built by `build` the first time) with `values`. Outside a
 * transaction it goes to the prepared pool (`preparedPool`): each statement is prepared once per
 * connection and runs its generic plan, so a search pays no planning (the statements' shapes, not
 * the words searched, choose their plans: ordered walks and GIN lookups). In a transaction it runs
 * there, as any other statement.
 */
export async function run<T>(ex: Executor, key: string, build: () => SQL, values: Values): Promise<T[]> {
  const { name, text, params } = statement(key, build)
  if (ex instanceof PgTransaction) {
    const prepared = ex._.session.prepareQuery({ sql: text, params }, undefined, undefined, false)
    return ((await prepared.execute(values)) as { rows: T[] }).rows
  }
  const result = await preparedPool().query({ name, text, values: fillPlaceholders(params, values) })
  return result.rows as T[]
}
