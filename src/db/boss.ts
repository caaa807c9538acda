import { sql } from 'drizzle-orm'
import { fromDrizzle, PgBoss } from 'pg-boss'
import type { Tx } from './tx'

// Bound once by startBoss(); ES module live binding.
export let boss: PgBoss

/**
 * pg-boss for every process: API processes only send (no maintenance or schedules), workers
 * also supervise queues and run handlers.
 */
export async function startBoss(url: string, worker: boolean): Promise<PgBoss> {
  boss = new PgBoss({
    connectionString: url,
    schema: 'pgboss',
    max: 4,
    supervise: worker,
    schedule: worker,
    // find jobs of dead workers (missed heartbeats) within seconds
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
  })
  boss.on('error', () => {})
  await boss.start()
  return boss
}

export async function stopBoss(): Promise<void> {
  await boss?.stop({ graceful: true, timeout: 10_000 })
}

/** Sends a job in the caller's transaction: the job exists if and only if the change commits. */
export function sendInTx(tx: Tx, queue: string, data: object) {
  return boss.send(queue, data, { db: fromDrizzle(tx as never, sql as never) })
}
