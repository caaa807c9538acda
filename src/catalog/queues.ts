import { defineQueue } from '../db/queues'

/** Re-decides a product's canonical fields from its candidates (idempotent). */
export const promoteQueue = defineQueue<{ productId: string }>('catalog.promote', {
  retryLimit: 5,
  retryBackoff: true,
})
