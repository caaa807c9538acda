import { and, eq, isNull, sql } from 'drizzle-orm'
import { webhookEndpoints } from '../db/schema'
import { onEvent } from '../events/consumers'
import { EVENT_TYPES } from '../events/types'
import { createDeliveries } from './deliveries'

/**
 * Fan-out: each committed event becomes one delivery per active endpoint of its organization that
 * lists its type (exact match; an empty list receives nothing). It runs as an event consumer, so
 * the deliveries and their jobs commit with the record that the event was consumed: once each.
 * `webhook.test` is not fanned out; the test operation addresses its one endpoint itself.
 */
export const webhookFanOut = onEvent(
  'webhooks.fan-out',
  EVENT_TYPES.filter((type) => type !== 'webhook.test'),
  async (tx, event) => {
    if (!event.organizationId) return
    const endpoints = await tx
      .select({ id: webhookEndpoints.id, isActive: webhookEndpoints.isActive })
      .from(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.organizationId, event.organizationId),
          eq(webhookEndpoints.isActive, true),
          isNull(webhookEndpoints.deletedAt),
          sql`${webhookEndpoints.eventTypes} @> array[${event.eventType}]::text[]`,
        ),
      )
    await createDeliveries(tx, { ...event, organizationId: event.organizationId }, endpoints)
  },
)
