import type { Job } from 'pg-boss'
import { promoteProduct } from '../src/catalog/promotion'
import { sendInTx } from '../src/db/boss'
import type { Tx } from '../src/db/tx'

/** Re-decides a product's canonical fields from its candidates; idempotent. */
export const name = 'catalog.promote'
export const options = { retryLimit: 5, retryBackoff: true }
export type Payload = { productId: string }

export const enqueue = (tx: Tx, data: Payload) => sendInTx(tx, name, data)

export async function handle(jobs: Job<Payload>[]) {
  for (const job of jobs) await promoteProduct(job.data.productId)
}
