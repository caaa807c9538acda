import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { logger } from '../shared/logger'
import * as schema from './schema'

export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool }

// Bound once by connectDb(); ES module live bindings make the value visible to importers.
export let db: Db
export let pool: pg.Pool
export let databaseUrl: string

const POOL_TIMEOUTS = { idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000 }
const lostConnection = (err: Error) => logger.warn({ err }, 'idle database connection lost; the pool replaces it')

/**
 * pg-pool takes its idle 'error' listener off a client while it is checked out (a transaction
 * between statements, a claim's round trip), so a connection dropped then (PostgreSQL stopped or
 * restarted) emitted 'error' with nothing listening and ended the process: seen as a crash in the
 * outage test, 2 runs of 25 on a loaded machine. Every client keeps a listener of its own: the
 * statement in flight, or the next one, fails (a 503 for a request, a retry for a job), and the pool
 * discards the client when it is released.
 */
const guardClients = (target: pg.Pool) =>
  target.on('connect', (client) =>
    client.on('error', (err) =>
      logger.warn({ err }, 'database connection lost while in use; its work fails and is retried'),
    ),
  )

/** Pool sizes, from the configuration (DB_POOL_SIZE, SEARCH_POOL_SIZE): the caller passes them in. */
export type PoolSizes = { size: number; searchSize: number }
let sizes: PoolSizes

export function connectDb(url: string, pools: PoolSizes): Db {
  databaseUrl = url
  sizes = pools
  const max = pools.size
  pool = new pg.Pool({ connectionString: url, max, ...POOL_TIMEOUTS })
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', lostConnection)
  guardClients(pool)
  db = drizzle(pool, { schema, casing: 'snake_case' }) as Db
  return db
}

/** The session settings of the prepared pool: generic plans, no parallel workers. */
export const PREPARED_SESSION = '-c plan_cache_mode=force_generic_plan -c max_parallel_workers_per_gather=0'
let prepared: pg.Pool | undefined
/**
 * A pool of its own for hot read-only statements that are prepared once per connection and run with
 * their generic plan (search: planning its statements took longer than running them), and without
 * parallel workers, whose start costs more than a small query and which concurrent requests starve.
 */
export function preparedPool(): pg.Pool {
  if (prepared) return prepared
  prepared = new pg.Pool({
    connectionString: databaseUrl,
    max: sizes.searchSize,
    ...POOL_TIMEOUTS,
    options: PREPARED_SESSION,
  })
  prepared.on('error', lostConnection)
  guardClients(prepared)
  return prepared
}

export async function closeDb(): Promise<void> {
  const [main, second] = [pool, prepared]
  prepared = undefined
  await Promise.all([main?.end(), second?.end()])
}
