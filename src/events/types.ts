import { toShortId } from '../shared/ids'

/**
 * Every event type the service emits (contract §7). A feature that adds a type adds it here, so
 * emitters, consumers and webhook subscriptions agree on one closed set.
 */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.claimed',
  'product.unclaimed',
  'product.recalled',
  'offer.updated',
  'retailer.created',
  'retailer.updated',
  'resolution_rule.created',
  'resolution_rule.updated',
  'resolution_rule.deleted',
  'revenue_share.calculated',
  'feed_run.completed',
  'feed_run.failed',
  'webhook.test',
  'webhook_endpoint.disabled',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** What a change emits: the resource as the API returns it, for its organization. */
export type NewEvent = {
  eventType: EventType
  organizationId: string | null
  /** The UUID of the resource the event is about. */
  subjectId: string
  data: Record<string, unknown>
}

/** A committed event, as consumers receive it. */
export type DomainEvent = NewEvent & { id: string; created: Date }

/** The event as partners receive it (contract §7): shortuuid ids, ISO time, the resource as data. */
export function eventBody(event: DomainEvent) {
  return {
    id: toShortId(event.id),
    event_type: event.eventType,
    created: event.created.toISOString(),
    organization_id: event.organizationId ? toShortId(event.organizationId) : null,
    data: event.data,
  }
}
