import { sql } from 'drizzle-orm'
import { gtinsOf } from '../catalog/resource'
import { arrayParam } from '../db/params'
import { refSubscriber } from '../events/subscribers'
import { announceQueue } from './queues'
import { INDEX_CHANNEL } from './rule-index'

/**
 * Keeps every process's rule index in step (outbox-driven): a committed rule change, or a product
 * whose owner or brand may have changed, is announced on the index's channel. NOTIFY is sent in
 * the subscriber's transaction, so it goes out only when the event is recorded as handled. A batch
 * is announced by one statement (a feed chunk creates thousands of products at once), and a
 * product's GTIN, which never changes, is read from the catalog rather than from each event's body.
 */
export const announceSubscriber = refSubscriber({
  queue: announceQueue,
  events: [
    'resolution_rule.created',
    'resolution_rule.updated',
    'resolution_rule.deleted',
    'product.created',
    'product.updated',
    'product.claimed',
    'product.unclaimed',
  ],
  handle: async (tx, events) => {
    const rules = events.filter((e) => e.eventType.startsWith('resolution_rule.')).map((e) => `rule:${e.subjectId}`)
    const products = events.filter((e) => e.eventType.startsWith('product.')).map((e) => e.subjectId)
    const gtins = (await gtinsOf(tx, products)).map((gtin) => `product:${gtin}`)
    await tx.execute(sql`select pg_notify(${INDEX_CHANNEL}, payload)
      from unnest(${arrayParam([...rules, ...gtins], 'text')}) as announced(payload)`)
  },
})
