import { fillPlaceholders, type SQL, sql } from 'drizzle-orm'
import { PgDialect, PgTransaction } from 'drizzle-orm/pg-core'
import type pg from 'pg'
import { preparedPool } from '../db/client'
import type { Executor, Tx } from '../db/tx'

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
 * type, so their number must be bounded.
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
 * Where a search's statements run: the caller's transaction, or one connection of the search pool
 * (`preparedPool`) held for the whole search.
 */
export type Session = Tx | pg.PoolClient

/**
 * Runs `work` in a session: in the caller's transaction when `ex` is one, else on a connection of
 * the search pool held until `work` returns, so a search of several statements (a substring runs two)
 * waits for a connection once, not once per statement behind every search that arrived meanwhile.
 * On the search pool each statement is prepared once per connection and runs its generic plan, so
 * a search pays no planning (the statements' shapes, not the words searched, choose their plans:
 * ordered walks and GIN lookups).
 */
export async function withSession<T>(ex: Executor, work: (session: Session) => Promise<T>): Promise<T> {
  if (ex instanceof PgTransaction) return work(ex)
  const client = await preparedPool().connect()
  let failed: Error | undefined
  try {
    return await work(client)
  } catch (err) {
    failed = err as Error
    throw err
  } finally {
    // as pg's pool.query does: a connection that failed a statement is not reused
    client.release(failed)
  }
}

/** Runs the search statement of `key` (built by `build` the first time) with `values`, in `session`. */
export async function run<T>(session: Session, key: string, build: () => SQL, values: Values): Promise<T[]> {
  const { name, text, params } = statement(key, build)
  if (session instanceof PgTransaction) {
    const prepared = session._.session.prepareQuery({ sql: text, params }, undefined, undefined, false)
    return ((await prepared.execute(values)) as { rows: T[] }).rows
  }
  const result = await session.query({ name, text, values: fillPlaceholders(params, values) })
  return result.rows as T[]
}
