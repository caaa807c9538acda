import { keyCache, listenForRevocations } from './accounts/key-cache'
import type { Config } from './config'
import { startBoss, stopBoss } from './db/boss'
import { closeDb, connectDb, type Db } from './db/client'
import { startEmbeddedDatabase } from './db/embedded'
import { migrateDatabase } from './db/migrate'

export type Database = { db: Db; url: string; embedded: boolean; close: () => Promise<void> }

/** DATABASE_URL, or the embedded cluster of DATA_DIR; connected and migrated. */
export async function openDatabase(config: Config, poolSize?: number): Promise<Database> {
  const embedded = config.DATABASE_URL ? null : await startEmbeddedDatabase(config.DATA_DIR)
  const url = config.DATABASE_URL ?? embedded!.url
  const db = connectDb(url, poolSize)
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

/** Background parts of a serving process: key revocation listener and, for workers, pg-boss. */
export async function startBackground(config: Config, url: string, withWorkers: boolean) {
  keyCache.configure(config.KEY_CACHE_TTL)
  const stopListening = listenForRevocations(url)
  const boss = await startBoss(url, withWorkers)
  const { createQueues, startWorkers } = await import('../jobs/index')
  await createQueues(boss)
  if (withWorkers) await startWorkers(boss)
  return async () => {
    await stopListening()
    await stopBoss()
  }
}
