import { defineQueue } from '../db/queues'

/** Renders a barcode batch export. A worker that dies stops heart-beating; the job is retried. */
export const batchQueue = defineQueue<{ batchId: string }>(
  'barcodes.render',
  { retryLimit: 3, retryDelay: 1, heartbeatSeconds: 10, expireInSeconds: 3600 },
  { formerly: ['barcode.batch'] },
)

/** Removes the files of batches past their retention (scheduled every 10 minutes). */
export const expireQueue = defineQueue<Record<string, never>>(
  'barcodes.expire',
  { retryLimit: 1 },
  { formerly: ['barcode.expire'] },
)
