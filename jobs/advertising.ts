import type { Job } from 'pg-boss'
import { failImport, runImport } from '../src/advertising/imports'
import { performanceImportQueue, revenueShareQueue } from '../src/advertising/queues'
import { calculateRevenueShares, previousPeriod } from '../src/advertising/revenue-shares'
import { config } from '../src/config'
import { db } from '../src/db/client'
import { type Binding, failingOnLastAttempt } from './binding'

export const performanceImport: Binding = {
  queue: performanceImportQueue,
  // a worker polls again 0.5 s after it started a job: a backlog of imports runs back to back
  work: { pollingIntervalSeconds: 0.5, localConcurrency: config.PERFORMANCE_IMPORT_CONCURRENCY },
  handle: async (jobs: Job<{ importId: string }>[]) => {
    for (const job of jobs)
      await failingOnLastAttempt(
        job,
        performanceImportQueue,
        (reason) => failImport(db, job.data.importId, reason),
        'the import',
        () => runImport(job.data.importId),
      )
  },
}

/**
 * On the 1st of every month at 02:00 UTC the month that ended is settled (pg-boss schedules run in
 * UTC). A retailer that cannot be settled does not fail the job (the others' shares are written):
 * it is listed in the job's output (pg-boss keeps the handler's result) and in the log.
 */
export const revenueShares: Binding = {
  queue: revenueShareQueue,
  schedule: '0 2 1 * *',
  work: { pollingIntervalSeconds: 2 },
  handle: async (jobs: Job<{ period?: string; platformFeeRate?: string }>[]) => {
    const outputs = []
    for (const job of jobs) {
      const period = job.data.period ?? previousPeriod(new Date())
      const { shares, failures } = await calculateRevenueShares(db, period, job.data.platformFeeRate)
      outputs.push({ period, written: shares.length, failures })
    }
    return outputs.length === 1 ? outputs[0] : outputs
  },
}
