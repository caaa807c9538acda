import { sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import { onEvents } from '../events/consumers'
import { INDEX_CHANNEL } from './rule-index'

/**
 * Keeps every process's rule index in step (outbox-driven): a committed rule change, or a product
 * whose owner or brand may have changed, is announced on the index's channel. NOTIFY is sent in
 * the consumer's transaction, so it goes out only when the event is recorded as consumed. A batch
 * is announced by one statement: a feed chunk creates thousands of products at once.
 */
export const resolverIndexConsumer = onEvents(
  'resolver-index',
  [
    'resolution_rule.created',
    'resolution_rule.updated',
    'resolution_rule.deleted',
    'product.created',
    'product.updated',
    'product.claimed',
    'product.unclaimed',
  ],
  async (tx, events) => {
    const payloads = events.flatMap((event) => {
      if (event.eventType.startsWith('resolution_rule.')) return [`rule:${event.subjectId}`]
      const gtin = (event.data as { gtin?: unknown }).gtin
      return typeof gtin === 'string' ? [`product:${gtin}`] : []
    })
    if (payloads.length)
      await tx.execute(
        sql`select pg_notify(${INDEX_CHANNEL}, p) from unnest(${arrayParam(payloads, 'text')}) with ordinality as n(p, i) order by i`,
      )
  },
)
