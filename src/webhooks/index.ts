// The webhooks feature: endpoints, the fan-out subscriber that turns events into deliveries, and
// the dispatcher that sends them (claimed fairly from the deliveries table, not a pg-boss queue).
import { defineFeature } from '../runtime/feature'
import { startDispatcher } from './dispatcher'
import { fanOutSubscriber } from './fan-out'
import { fanOutQueue } from './queues'
import { webhookRoutes } from './routes'

export { recoverEndpoint, recoverySince } from './deliveries'
export { verifyWebhookSignature } from './signature'

export const webhooks = defineFeature({
  name: 'webhooks',
  routes: [webhookRoutes],
  queues: [fanOutQueue],
  subscribers: [fanOutSubscriber],
  // Webhook attempts: shares per organization and per endpoint, circuit breakers; every worker
  // process runs a dispatcher, and the returned function stops it
  startInWorkers: async () => startDispatcher(),
})
