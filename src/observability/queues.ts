import { defineQueue } from '../db/queues'

/** Deletes idempotency keys past their 24 h (src/http/idempotency-store.ts), every hour. */
export const idempotencySweepQueue = defineQueue<Record<string, never>>(
  'observability.sweep-idempotency',
  { retryLimit: 1 },
  { formerly: ['idempotency.sweep'] },
)
