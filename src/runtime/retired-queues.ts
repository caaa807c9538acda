import { sql } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import { db } from '../db/client'
import { logger } from '../shared/logger'
import type { Worker } from './workers'

/** Jobs of a queue not yet settled: waiting, waiting for a retry, or running. */
async function unsettled(name: string): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(
    sql`select count(*)::int n from pgboss.job where name = ${name} and state in ('created', 'retry', 'active')`,
  )
  return rows[0]?.n ?? 0
}

async function stored(name: string): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(sql`select count(*)::int n from pgboss.job where name = ${name}`)
  return rows[0]?.n ?? 0
}

/**
 * Drain-and-retire, for a queue that was renamed (QueueSpec.formerly): the old queue's schedules
 * are removed, so it gets no new job; while it still holds unsettled jobs they run under the
 * worker of the new name (same handler, same payload); once none is left, the old queue is deleted
 * at a start-up, and its dead-letter queue once that holds no job either (its jobs are kept for
 * inspection until their retention ends). Nothing is moved between queues, so no job is lost to a
 * half-done move, and a process of the previous version that still sends to the old name is served.
 */
export async function retireFormerNames(boss: PgBoss, worker: Worker, drain: (former: string) => Promise<unknown>) {
  for (const former of worker.queue.formerly) {
    if (!(await boss.getQueue(former))) continue
    for (const schedule of await boss.getSchedules(former)) await boss.unschedule(former, schedule.key)
    const left = await unsettled(former)
    if (left > 0) {
      logger.info({ queue: former, successor: worker.queue.name, jobs: left }, 'renamed queue: draining its jobs')
      await drain(former)
      continue
    }
    await boss.deleteQueue(former)
    const dead = `${former}.dead`
    if ((await boss.getQueue(dead)) && (await stored(dead)) === 0) await boss.deleteQueue(dead)
    logger.info({ queue: former, successor: worker.queue.name }, 'renamed queue retired')
  }
}
