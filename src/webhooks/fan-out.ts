import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { unnestRows } from '../db/params'
import { webhookEndpoints } from '../db/schema'
import { atCommitOf } from '../events/at-commit'
import { refSubscriber } from '../events/subscribers'
import { EVENT_TYPES } from '../shared/event-types'
import { type DeliveryTarget, DUE_CHANNEL, queueDeliveries } from './deliveries'
import { fanOutQueue } from './queues'

/**
 * Fan-out: each committed event becomes one delivery per active endpoint of its organization that
 * lists its type (exact match; an empty list receives nothing). It runs as an event subscriber, so
 * the deliveries and their jobs commit with the record that the event was handled: once each.
 * A fetched batch of events is fanned out together: one read of the endpoints, one insert.
 * `webhook.test` is not fanned out; the test operation addresses its one endpoint itself.
 */
export const fanOutSubscriber = refSubscriber({
  queue: fanOutQueue,
  events: EVENT_TYPES.filter((type) => type !== 'webhook.test'),
  // a delivery renders its body from the event when it is sent: the body is never read here
  handle: async (tx, events) => {
    const organizations = [...new Set(events.map((e) => e.organizationId).filter((id) => id !== null))]
    if (organizations.length === 0) return
    const endpoints = await tx
      .select({
        id: webhookEndpoints.id,
        organizationId: webhookEndpoints.organizationId,
        eventTypes: webhookEndpoints.eventTypes,
      })
      .from(webhookEndpoints)
      .where(
        and(
          inArray(webhookEndpoints.organizationId, organizations),
          eq(webhookEndpoints.isActive, true),
          isNull(webhookEndpoints.deletedAt),
        ),
      )
      // held until commit, so none of them is deleted under its new deliveries: the deliveries'
      // foreign key did this per delivery (migration 0034)
      .for('key share')
    const targets: DeliveryTarget[] = []
    for (const event of events)
      for (const endpoint of endpoints)
        if (endpoint.organizationId === event.organizationId && endpoint.eventTypes.includes(event.eventType))
          targets.push({
            event: { id: event.id, eventType: event.eventType, organizationId: event.organizationId },
            endpoint: { id: endpoint.id, isActive: true },
          })
    await queueDeliveries(tx, targets)
  },
})

/**
 * The fan-out in the emitting transaction (src/events/at-commit.ts), which every process that
 * routes its emits runs instead of the subscriber: one statement inserts each event's deliveries
 * (the events joined to their organizations' active endpoints that list their type, those held `for
 * key share` as the subscriber holds them) and their schedule rows, and wakes the dispatchers at
 * commit. The events are neither read back nor recorded as consumed, and no job carries them.
 * Events of an organization without endpoints cost one probe of the endpoints' index.
 */
export const fanOutAtCommit = atCommitOf(fanOutSubscriber, async (tx, events) => {
  const owned = events.filter((e) => e.organizationId !== null)
  if (owned.length === 0) return
  await tx.execute(sql`with event as (select * from ${unnestRows(owned, 'e', {
    id: ['uuid', (e) => e.id],
    event_type: ['text', (e) => e.eventType],
    organization_id: ['uuid', (e) => e.organizationId],
  })}),
    endpoint as (
      select n.id, n.organization_id, n.event_types from webhook_endpoints n
      where n.organization_id = any(array(select distinct organization_id from event))
        and n.is_active and n.deleted_at is null
      for key share),
    delivery as (
      insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type)
      select e.organization_id, n.id, e.id, e.event_type
      from event e join endpoint n on n.organization_id = e.organization_id and e.event_type = any(n.event_types)
      returning id, endpoint_id, organization_id, event_id),
    scheduled as (
      insert into webhook_pending_deliveries (delivery_id, endpoint_id, organization_id, event_id, next_attempt_at)
      select id, endpoint_id, organization_id, event_id, now() from delivery
      returning 1)
    select pg_notify(${DUE_CHANNEL}, '') where exists (select 1 from scheduled)`)
})
