import { subscriberQueue } from '../events/queues'

/** The fan-out subscriber (fan-out.ts): one delivery per subscribed endpoint of each event. */
export const fanOutQueue = subscriberQueue('webhooks.fan-out', {}, { formerly: ['events.consume.webhooks.fan-out'] })
