import { defineQueue } from '../db/queues'

/** Applies an external verification signal to a claim (today: the GS1 company prefix match). */
export const verifyQueue = defineQueue<{ productId: string; organizationId: string; signal: 'gs1_prefix' }>(
  'catalog.verify',
  { retryLimit: 5, retryBackoff: true },
)

/** Re-decides a product's canonical fields from its candidates (idempotent). */
export const promoteQueue = defineQueue<{ productId: string }>('catalog.promote', {
  retryLimit: 5,
  retryBackoff: true,
})
