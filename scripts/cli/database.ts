import type { PgBoss } from 'pg-boss'
import type { Database } from '../../src/runtime'

/**
 * Opens the server's database for one command (DATABASE_URL, or the embedded cluster of DATA_DIR)
 * and closes it after. `jobs`: 'send' starts pg-boss to send jobs (events, deliveries), 'work'
 * also supervises and schedules, for a command that binds workers itself.
 */
export async function withDatabase<T>(
  poolSize: number,
  jobs: 'none' | 'send' | 'work',
  work: (database: Database, boss: PgBoss | null) => Promise<T>,
): Promise<T> {
  const { config } = await import('../../src/config')
  const { openDatabase, routeEmitsOf } = await import('../../src/runtime')
  const { startBoss, stopBoss } = await import('../../src/db/boss')
  const { features } = await import('../../src/features')
  // a command's events go the way the server's do (the webhook fan-out in their own transaction)
  routeEmitsOf(features)
  // a command joins the running server's embedded cluster, or starts (and stops) one of its own
  const database = await openDatabase(config, poolSize, 'command')
  try {
    const boss =
      jobs === 'none' ? null : await startBoss(database.url, jobs === 'work', config.SCHEDULE_INTERVAL_SECONDS)
    return await work(database, boss)
  } finally {
    if (jobs !== 'none') await stopBoss()
    await database.close()
  }
}
