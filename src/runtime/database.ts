import type { Config } from '../config'
import { closeDb, connectDb, type Db } from '../db/client'
import { type EmbeddedRole, startEmbeddedDatabase } from '../db/embedded'
import { migrateDatabase } from '../db/migrate'

export type Database = { db: Db; url: string; embedded: boolean; close: () => Promise<void> }

/**
 * DATABASE_URL, or the embedded cluster of DATA_DIR; connected and migrated. `role`: a server
 * owns the embedded cluster (one server per DATA_DIR), a CLI command joins a running server's.
 */
export async function openDatabase(
  config: Config,
  poolSize?: number,
  role: EmbeddedRole = 'server',
): Promise<Database> {
  const embedded = config.DATABASE_URL
    ? null
    : await startEmbeddedDatabase(config.DATA_DIR, {
        role,
        fsync: config.EMBEDDED_POSTGRES_FSYNC === 'on',
        settings: config.EMBEDDED_POSTGRES_SETTINGS.split(/\s+/).filter(Boolean),
      })
  const url = config.DATABASE_URL ?? embedded!.url
  const db = connectDb(url, { size: poolSize ?? config.DB_POOL_SIZE, searchSize: config.SEARCH_POOL_SIZE })
  try {
    await migrateDatabase(db)
  } catch (err) {
    await closeDb().catch(() => {})
    await embedded?.stop().catch(() => {})
    throw err
  }
  return {
    db,
    url,
    embedded: embedded !== null,
    close: async () => {
      await closeDb()
      await embedded?.stop()
    },
  }
}
