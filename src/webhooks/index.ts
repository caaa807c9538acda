// The webhooks feature: endpoints, the fan-out that turns events into deliveries as they are
// emitted (and its subscriber, for events no hook fanned out), and the dispatcher that sends them
// (claimed fairly from the deliveries table, not a pg-boss queue).
import { defineFeature } from '../runtime/feature'
import { startDispatcher } from './dispatcher'
import { fanOutAtCommit, fanOutSubscriber } from './fan-out'
import { fanOutQueue } from './queues'
import { webhookRoutes } from './routes'
import { watchSchedule } from './schedule-rebuild'

export { recoverEndpoint, recoverySince } from './deliveries'
export { verifyWebhookSignature } from './signature'

export const webhooks = defineFeature({
  name: 'webhooks',
  routes: [webhookRoutes],
  queues: [fanOutQueue],
  // the fan-out runs in the emitting transaction; its subscriber handles what no process's hook did
  subscribers: [fanOutSubscriber],
  atCommit: [fanOutAtCommit],
  // Webhook attempts: shares per organization and per endpoint, circuit breakers; every worker
  // process runs a dispatcher and checks that the schedule survived PostgreSQL (rebuilding it when a
  // crash emptied it: at start, beside the dispatcher, and every few seconds after); the returned
  // function stops both
  startInWorkers: async () => {
    const stopWatching = watchSchedule()
    const stopDispatching = startDispatcher()
    return async () => {
      await stopWatching()
      await stopDispatching()
    }
  },
})
