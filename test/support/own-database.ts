import { join } from 'node:path'
import { drizzle } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import { sql } from './fixtures'
import { databaseUrl } from './server'

/** The repository's migrations. */
export const MIGRATIONS = join(import.meta.dir, '../../src/db/migrations')

/**
 * A database of a test file's own on the test cluster, for service processes whose background
 * work must see only that file's data: `url` for DATABASE_URL; create before, drop after.
 * `migrated` applies the migrations of `folder` (the repository's, or a copy cut short) and
 * returns a client on the database, for the test to write and check its rows.
 */
export function ownDatabase(prefix: string) {
  const name = `${prefix}_${Date.now()}`
  const url = new URL(databaseUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.href,
    create: () => sql(`create database ${name}`),
    drop: () => sql(`drop database if exists ${name} with (force)`),
    migrated: async (folder = MIGRATIONS) => {
      const pool = new pg.Pool({ connectionString: url.href, max: 1 })
      await migrate(drizzle(pool), { migrationsFolder: folder })
      await pool.end()
      const client = new pg.Client({ connectionString: url.href })
      await client.connect()
      return client
    },
  }
}
