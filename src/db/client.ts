import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { config } from '../config'
import { logger } from '../shared/logger'
import * as schema from './schema'

export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool }

// Bound once by connectDb(); ES module live bindings make the value visible to importers.
export let db: Db
export let pool: pg.Pool
export let databaseUrl: string

export function connectDb(url: string, max = config.DB_POOL_SIZE): Db {
  databaseUrl = url
  pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000 })
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection lost; the pool replaces it'))
  db = drizzle(pool, { schema, casing: 'snake_case' }) as Db
  return db
}

export async function closeDb(): Promise<void> {
  await pool?.end()
}
