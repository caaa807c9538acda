import { sql } from 'drizzle-orm'
import { onEvent } from '../events/consumers'
import { INDEX_CHANNEL } from './rule-index'

/**
 * Keeps every process's rule index in step (outbox-driven): a committed rule change, or a product
 * whose owner or brand may have changed, is announced on the index's channel. NOTIFY is sent in
 * the consumer's transaction, so it goes out only when the event is recorded as consumed.
 */
export const resolverIndexConsumer = onEvent(
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
  async (tx, event) => {
    const gtin = (event.data as { gtin?: unknown }).gtin
    const payload = event.eventType.startsWith('resolution_rule.')
      ? `rule:${event.subjectId}`
      : typeof gtin === 'string'
        ? `product:${gtin}`
        : null
    if (payload) await tx.execute(sql`select pg_notify(${INDEX_CHANNEL}, ${payload})`)
  },
)
