import type { PgBoss, WorkOptions } from 'pg-boss'
import type { QueueDef } from '../src/db/queues'
import { logger } from '../src/shared/logger'

/** A handler bound to a queue a feature declared. */
export type Binding = {
  queue: QueueDef<any>
  work?: WorkOptions
  handle: (jobs: any[]) => Promise<unknown>
}

/** Starts a worker; a failing job is logged with its queue and id, then retried by pg-boss. */
export function bind(boss: PgBoss, { queue, work = {}, handle }: Binding) {
  return boss.work(queue.name, work, async (jobs: { id: string }[]) => {
    try {
      return await handle(jobs)
    } catch (err) {
      logger.error({ err, queue: queue.name, job_ids: jobs.map((j) => j.id) }, 'job failed; pg-boss retries it')
      throw err
    }
  })
}
