import type { Job } from 'pg-boss'
import { config } from '../src/config'
import { attemptDelivery } from '../src/webhooks/attempts'
import { deliverQueue } from '../src/webhooks/deliveries'
import '../src/webhooks/fan-out' // the fan-out consumer is bound with the other consumers
import type { StreamBinding } from './stream'

/** Webhook attempts, streamed: a slow receiver holds only its own slots (at most its group's cap). */
export const webhookDeliver: StreamBinding<{ deliveryId: string; token: string }> = {
  queue: deliverQueue,
  maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
  groupConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
  handleOne: (job: Job<{ deliveryId: string; token: string }>) => attemptDelivery(job.data.deliveryId, job.data.token),
}
