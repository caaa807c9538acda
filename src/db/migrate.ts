import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import type { Db } from './client'

const MIGRATIONS = join(import.meta.dir, 'migrations')
const LOCK = 727_001 // advisory lock id: api and worker processes may start together

/** Applies the committed drizzle-kit migrations, one process at a time. */
export async function migrateDatabase(db: Db): Promise<void> {
  const client = await db.$client.connect()
  try {
    await client.query('select pg_advisory_lock($1)', [LOCK])
    await migrate(db, { migrationsFolder: MIGRATIONS })
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK]).catch(() => {})
    client.release()
  }
}

/** Whether every committed migration has been applied (for /readyz). */
export async function migrationsApplied(db: Db): Promise<boolean> {
  const journal = (await Bun.file(join(MIGRATIONS, 'meta', '_journal.json')).json()) as { entries: unknown[] }
  const applied = await db.execute<{ n: number }>(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)
  return (applied.rows[0]?.n ?? 0) >= journal.entries.length
}
