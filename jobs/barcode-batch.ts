import type { Job } from 'pg-boss'
import { runBatch } from '../src/barcodes/batches'
import { sendInTx } from '../src/db/boss'
import type { Tx } from '../src/db/tx'

/** Renders a barcode batch export. A worker that dies stops heart-beating; the job is retried. */
export const name = 'barcode.batch'
export const options = { retryLimit: 3, retryDelay: 1, heartbeatSeconds: 10, expireInSeconds: 3600 }
export type Payload = { batchId: string }

export const enqueue = (tx: Tx, data: Payload) => sendInTx(tx, name, data)

export async function handle(jobs: Job<Payload>[]) {
  for (const job of jobs) await runBatch(job.data.batchId, job.retryCount >= options.retryLimit)
}
