import { config } from '../config'
import { db } from '../db/client'
import { bind, failingOnLastAttempt } from '../runtime/workers'
import { failImport, runImport } from './imports'
import { performanceImportQueue, revenueShareQueue } from './queues'
import { calculateRevenueShares, previousPeriod } from './revenue-shares'

export const importWorker = bind(
  performanceImportQueue,
  async (jobs) => {
    for (const job of jobs)
      await failingOnLastAttempt(
        job,
        performanceImportQueue,
        (reason) => failImport(db, job.data.importId, reason),
        'the import',
        () => runImport(job.data.importId),
      )
  },
  // a worker polls again 0.5 s after it started a job: a backlog of imports runs back to back
  { work: { pollingIntervalSeconds: 0.5, localConcurrency: config.PERFORMANCE_IMPORT_CONCURRENCY } },
)

/**
 * On the 1st of every month at 02:00 UTC the month that ended is settled (pg-boss schedules run in
 * UTC). A retailer that cannot be settled does not fail the job (the others' shares are written):
 * it is listed in the job's output (pg-boss keeps the handler's result) and in the log.
 */
export const sharesWorker = bind(
  revenueShareQueue,
  async (jobs) => {
    const outputs = []
    for (const job of jobs) {
      const period = job.data.period ?? previousPeriod(new Date())
      const { shares, failures } = await calculateRevenueShares(db, period, job.data.platformFeeRate)
      outputs.push({ period, written: shares.length, failures })
    }
    return outputs.length === 1 ? outputs[0] : outputs
  },
  { schedule: '0 2 1 * *', work: { pollingIntervalSeconds: 2 } },
)
