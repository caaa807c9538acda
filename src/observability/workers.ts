import { sweepIdempotencyKeys } from '../http/idempotency-store'
import { bind } from '../runtime/workers'
import { idempotencySweepQueue } from './queues'

/** Idempotency keys past their 24 h are deleted every hour (a replay older than that is refused anyway). */
export const idempotencySweepWorker = bind(idempotencySweepQueue, () => sweepIdempotencyKeys(), {
  schedule: '17 * * * *',
})
