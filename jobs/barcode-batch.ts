import type { Job } from 'pg-boss'
import { expireBatches, runBatch } from '../src/barcodes/batches'
import { batchQueue, expireQueue } from '../src/barcodes/queues'
import type { Binding } from './binding'

export const barcodeBatch: Binding = {
  queue: batchQueue,
  handle: async (jobs: Job<{ batchId: string }>[]) => {
    for (const job of jobs) await runBatch(job.data.batchId, job.retryCount >= (batchQueue.options.retryLimit ?? 0))
  },
}

export const barcodeExpire: Binding = {
  queue: expireQueue,
  schedule: '*/10 * * * *',
  handle: () => expireBatches(),
}
