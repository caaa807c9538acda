import { defineQueue } from '../db/queues'

/** Renders a barcode batch export. A worker that dies stops heart-beating; the job is retried. */
export const batchQueue = defineQueue<{ batchId: string }>('barcode.batch', {
  retryLimit: 3,
  retryDelay: 1,
  heartbeatSeconds: 10,
  expireInSeconds: 3600,
})

/** Removes the files of batches past their retention (scheduled every 10 minutes). */
export const expireQueue = defineQueue<Record<string, never>>('barcode.expire', { retryLimit: 1 })
