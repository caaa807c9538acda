import type { Job, PgBoss, WorkOptions } from 'pg-boss'
import type { QueueDef } from '../src/db/queues'
import { logger } from '../src/shared/logger'

/** A handler bound to a queue a feature declared. */
export type Binding = {
  queue: QueueDef<any>
  work?: WorkOptions
  /** a cron expression: the queue also gets a job on this schedule */
  schedule?: string
  handle: (jobs: any[]) => Promise<unknown>
}

/** Starts a worker; a failing job is logged with its queue and id, then retried by pg-boss. */
export async function bind(boss: PgBoss, { queue, work = {}, handle, schedule }: Binding) {
  if (schedule) await boss.schedule(queue.name, schedule)
  return boss.work(queue.name, work, async (jobs: { id: string }[]) => {
    try {
      return await handle(jobs)
    } catch (err) {
      logger.error({ err, queue: queue.name, job_ids: jobs.map((j) => j.id) }, 'job failed; pg-boss retries it')
      throw err
    }
  })
}

/**
 * Runs a job's work; when its last retry fails, `fail` records why on what the job was doing (a
 * run, an import), so that never stays "running" forever. The error goes on to pg-boss.
 */
export async function failingOnLastAttempt(
  job: Job<unknown>,
  queue: QueueDef<any>,
  fail: (reason: string) => Promise<unknown>,
  what: string,
  work: () => Promise<unknown>,
) {
  try {
    await work()
  } catch (err) {
    const limit = queue.options.retryLimit ?? 0
    if (job.retryCount >= limit) await fail(`${what} failed after ${limit} retries: ${(err as Error).message}`)
    throw err
  }
}
