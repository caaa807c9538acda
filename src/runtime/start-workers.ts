import type { Job, PgBoss } from 'pg-boss'
import { createQueue } from '../db/queues'
import { withJobSpans } from '../observability/tracing'
import { logger } from '../shared/logger'
import { retireFormerNames } from './retired-queues'
import type { KeyedSchedule, Worker } from './workers'

/** Every process creates the queues it may send to (idempotent), dead-letter queues first. */
export async function createQueues(workers: readonly Worker[]): Promise<void> {
  for (const { queue } of workers) await createQueue(queue)
}

/**
 * Starts a worker on its queue (or on one of its queue's former names, while that drains); a
 * failing job is logged with its queue and ids, then retried by pg-boss.
 */
export async function startWorker(boss: PgBoss, worker: Worker, name = worker.queue.name) {
  if (name === worker.queue.name) {
    if (worker.schedule) await boss.schedule(name, worker.schedule)
    if (worker.schedules) await syncSchedules(boss, name, await worker.schedules())
  }
  let workId: string | null = null
  workId = await boss.work<object>(name, worker.work, async (jobs: Job<object>[]) => {
    let result: unknown
    try {
      // a span per job, continuing the trace of the request that sent it
      result = await withJobSpans(name, jobs, () => worker.run(jobs))
    } catch (err) {
      logger.error({ err, queue: name, job_ids: jobs.map((j) => j.id) }, 'job failed; pg-boss retries it')
      // a failed batch waits out the poll as before: failures are not retried at the database's pace
      throw err
    }
    // This batch's worker skips its poll's wait once pg-boss has completed the batch (it cannot be
    // told apart here, so every worker of the queue holding a batch is told: each would do the
    // same when its own ends). Workers waiting out a poll are left to it: woken now, before this
    // job's completion frees its group's slot, their fetch could find nothing.
    if (worker.fetchAgainAtOnce)
      for (const other of boss.getWipData()) if (other.workId === workId && other.count > 0) boss.notifyWorker(other.id)
    return result
  })
  return workId
}

/** Starts every worker, and drains the queues they had under former names. */
export async function startWorkers(boss: PgBoss, workers: readonly Worker[]): Promise<void> {
  for (const worker of workers) {
    await startWorker(boss, worker)
    await retireFormerNames(boss, worker, (former) => startWorker(boss, worker, former))
  }
}

/** Makes a queue's keyed schedules exactly `wanted` (a bad cron or zone throws, naming the key). */
async function syncSchedules(boss: PgBoss, name: string, wanted: KeyedSchedule[]) {
  for (const { key, cron, tz, data } of wanted)
    await boss.schedule(name, cron, data, { key, tz }).catch((err: Error) => {
      throw new Error(`schedule ${key}: ${err.message}`)
    })
  const keys = new Set(wanted.map((w) => w.key))
  for (const existing of await boss.getSchedules(name))
    if (existing.key && !keys.has(existing.key)) await boss.unschedule(name, existing.key)
  logger.info({ queue: name, schedules: [...keys] }, 'schedules synced')
}
