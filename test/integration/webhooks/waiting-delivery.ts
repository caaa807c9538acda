import { toShortId } from '../../../src/shared/ids'
import { sql } from '../../support/fixtures'

/**
 * A `webhook.test` delivery waiting for a switched-off endpoint, as one queued while the endpoint
 * was on and then paused. The API no longer queues a test for a switched-off endpoint (409), and
 * going through an active endpoint would let the dispatcher attempt it mid-test, so the rows are
 * written directly. Returns the delivery's short id.
 */
export async function waitingTestDelivery(signingSecret: string): Promise<string> {
  const [row] = await sql<{ id: string }>(
    `with ep as (select id, organization_id from webhook_endpoints where signing_secret = $1 and not is_active),
     ev as (insert into events (id, event_type, organization_id, subject_id, data)
            select gen_random_uuid(), 'webhook.test', organization_id, id,
                   jsonb_build_object('message', 'This is a test delivery.') from ep
            returning id, organization_id, subject_id),
     delivery as (insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type)
            select organization_id, subject_id, id, 'webhook.test' from ev
            returning id, organization_id, endpoint_id, event_id)
     insert into webhook_pending_deliveries (delivery_id, endpoint_id, organization_id, event_id, next_attempt_at)
     select id, endpoint_id, organization_id, event_id, null from delivery
     returning delivery_id as id`,
    [signingSecret],
  )
  if (!row) throw new Error('no switched-off endpoint has this secret')
  return toShortId(row.id)
}
