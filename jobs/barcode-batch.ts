import type { Job } from 'pg-boss'
import { runBatch } from '../src/barcodes/batches'
import { batchQueue } from '../src/barcodes/queues'
import type { Binding } from './binding'

export const barcodeBatch: Binding = {
  queue: batchQueue,
  handle: async (jobs: Job<{ batchId: string }>[]) => {
    for (const job of jobs) await runBatch(job.data.batchId, job.retryCount >= (batchQueue.options.retryLimit ?? 0))
  },
}
