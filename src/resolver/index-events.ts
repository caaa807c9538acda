import { sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import { onEvents } from '../events/consumers'
import { INDEX_CHANNEL } from './rule-index'

/**
 * Keeps every process's rule index in step (outbox-driven): a committed rule change, or a product
 * whose owner or brand may have changed, is announced on the index's channel. NOTIFY is sent in
 * the consumer's transaction, so it goes out only when the event is recorded as consumed. A batch
 * is announced by one statement (a feed chunk creates thousands of products at once), and a
 * product's GTIN, which never changes, is read from the catalog rather than from each event's body.
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
    const rules = events.filter((e) => e.eventType.startsWith('resolution_rule.')).map((e) => e.subjectId)
    const products = events.filter((e) => e.eventType.startsWith('product.')).map((e) => e.subjectId)
    await tx.execute(sql`select pg_notify(${INDEX_CHANNEL}, payload) from (
        select 'rule:' || id as payload from unnest(${arrayParam(rules, 'uuid')}) as r(id)
        union all
        select 'product:' || gtin from products where id = any(${arrayParam(products, 'uuid')})
      ) announced`)
  },
  { withoutData: true },
)
