import { bind } from '../runtime/workers'
import { expireBatches, runBatch } from './batches'
import { batchQueue, expireQueue } from './queues'

export const renderWorker = bind(batchQueue, async (jobs) => {
  for (const job of jobs) await runBatch(job.data.batchId, job.retryCount >= (batchQueue.options.retryLimit ?? 0))
})

export const expireWorker = bind(expireQueue, () => expireBatches(), { schedule: '*/10 * * * *' })
