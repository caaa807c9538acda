import { subscriberQueue } from '../events/queues'

/** The rule index's subscriber (subscribers.ts): announces changed rules and products to every process. */
export const announceQueue = subscriberQueue('resolver.announce', {}, { formerly: ['events.consume.resolver-index'] })
