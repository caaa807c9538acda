// Observability: the metrics endpoint, traces carried into jobs and deliveries, and the hourly
// sweep of idempotency keys.
import { defineFeature } from '../runtime/feature'
import { idempotencySweepQueue } from './queues'
import { metricsRoutes } from './routes'
import { idempotencySweepWorker } from './workers'

export { metricsRoutes }

export const observability = defineFeature({
  name: 'observability',
  routes: [metricsRoutes],
  queues: [idempotencySweepQueue],
  workers: [idempotencySweepWorker],
})
