import { sweepIdempotencyKeys } from '../src/http/idempotency-store'
import { idempotencySweepQueue } from '../src/observability/queues'
import type { Binding } from './binding'

/** Idempotency keys past their 24 h are deleted every hour (a replay older than that is refused anyway). */
export const idempotencySweep: Binding = {
  queue: idempotencySweepQueue,
  schedule: '17 * * * *',
  handle: () => sweepIdempotencyKeys(),
}
