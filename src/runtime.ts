import type { PgBoss } from 'pg-boss'
import { keyCache, listenForRevocations } from './accounts/key-cache'
import { reportCache } from './advertising/report-cache'
import type { Config } from './config'
import { startBoss, stopBoss } from './db/boss'
import { closeDb, connectDb, type Db } from './db/client'
import { type EmbeddedRole, startEmbeddedDatabase } from './db/embedded'
import { listener } from './db/listener'
import { migrateDatabase } from './db/migrate'
import { ruleIndex } from './resolver/rule-index'

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
  const embedded = config.DATABASE_URL ? null : await startEmbeddedDatabase(config.DATA_DIR, { role })
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

/** What `jobs/` provides: queue creation and handler binding (src/ never imports jobs/). */
export type JobRunner = {
  createQueues: () => Promise<void>
  /** Starts the handlers; resolves to a function that stops what pg-boss does not stop itself. */
  startWorkers: (boss: PgBoss) => Promise<() => Promise<void>>
}

/** Background parts of a serving process: the notification listener, pg-boss and, for workers, handlers. */
export async function startBackground(config: Config, url: string, jobs: JobRunner, withWorkers: boolean) {
  keyCache.configure(config.KEY_CACHE_TTL)
  await listenForRevocations()
  await ruleIndex.listen()
  await reportCache.listen()
  listener.start(url)
  const boss = await startBoss(url, withWorkers)
  await jobs.createQueues()
  const stopWorkers = withWorkers ? await jobs.startWorkers(boss) : async () => {}
  return async () => {
    await stopWorkers()
    await listener.stop()
    await stopBoss()
  }
}
