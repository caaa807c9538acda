import { startDispatcher } from '../src/webhooks/dispatcher'
import '../src/webhooks/fan-out' // the fan-out consumer is bound with the other consumers

/**
 * Webhook attempts: claimed fairly from the deliveries table by src/webhooks/dispatcher.ts
 * (shares per organization and per endpoint, circuit breakers), not fetched from a pg-boss queue
 * in creation order. Started in every worker process; the returned function stops it.
 */
export const webhookDeliver = { start: () => startDispatcher() }
