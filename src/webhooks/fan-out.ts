import { and, eq, inArray, isNull } from 'drizzle-orm'
import { webhookEndpoints } from '../db/schema'
import { refSubscriber } from '../events/subscribers'
import { EVENT_TYPES } from '../shared/event-types'
import { type DeliveryTarget, queueDeliveries } from './deliveries'
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
