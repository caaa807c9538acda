import type { RevenueShare } from '../advertising/schemas'
import type { Product } from '../catalog/schemas'
import type { Offer, Run } from '../feeds/schemas'
import type { Rule } from '../resolver/schemas'
import type { Retailer } from '../retailers/schemas'
import { EVENT_TYPES, type EventType } from '../shared/event-types'
import { toShortId } from '../shared/ids'
import type { Endpoint } from '../webhooks/schemas'

export { EVENT_TYPES, type EventType }

/**
 * What each event type carries: the resource as the API returns it (its response schema's type),
 * so an emitter that sends another shape, or a subscriber that reads a field the resource lacks,
 * fails `tsc`. Only response schemas are imported here (they import no emitter: no import cycle).
 */
export type EventPayloads = {
  'product.created': typeof Product.static
  'product.updated': typeof Product.static
  'product.claimed': typeof Product.static
  'product.unclaimed': typeof Product.static
  'product.recalled': typeof Product.static
  'offer.updated': typeof Offer.static
  'retailer.created': typeof Retailer.static
  'retailer.updated': typeof Retailer.static
  'resolution_rule.created': typeof Rule.static
  'resolution_rule.updated': typeof Rule.static
  'resolution_rule.deleted': typeof Rule.static
  'revenue_share.calculated': typeof RevenueShare.static
  'feed_run.completed': typeof Run.static
  'feed_run.failed': typeof Run.static
  'webhook.test': { endpoint_id: string; message: string }
  'webhook_endpoint.disabled': typeof Endpoint.static
}

/** What a change emits, for one of the given types: the type names its payload (a union per type). */
export type NewEvent<T extends EventType = EventType> = {
  [K in T]: {
    eventType: K
    organizationId: string | null
    /** The UUID of the resource the event is about. */
    subjectId: string
    data: EventPayloads[K]
  }
}[T]

/** A committed event, as subscribers receive it. */
export type DomainEvent<T extends EventType = EventType> = NewEvent<T> & { id: string; created: Date }

/** A committed event without its body, for subscribers that never read it (see `subscriber`). */
export type EventRef<T extends EventType = EventType> = Omit<DomainEvent<T>, 'data'>

/**
 * An outbox row as the event it is: `emit` wrote its type and body together from one NewEvent,
 * whose type the map checked, so the row's body is its type's payload (the one place this is taken
 * on trust: the table's column is generic jsonb).
 */
export const storedEvent = <R extends { eventType: EventType; data: Record<string, unknown> }>(row: R) =>
  row as unknown as DomainEvent & Omit<R, 'eventType' | 'data'>

/** The event as partners receive it (contract §7): shortuuid ids, ISO time, the resource as data. */
export function eventBody(event: {
  id: string
  eventType: EventType
  created: Date
  organizationId: string | null
  data: unknown
}) {
  return {
    id: toShortId(event.id),
    event_type: event.eventType,
    created: event.created.toISOString(),
    organization_id: event.organizationId ? toShortId(event.organizationId) : null,
    data: event.data,
  }
}
