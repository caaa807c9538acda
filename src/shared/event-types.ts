/**
 * Every event type the service emits (contract §7), as plain names: the outbox table, webhook
 * subscriptions and the payload map (src/events/types.ts) all use this one closed set. It lives
 * here, below every layer, so that the database schema can type its columns without importing
 * src/events.
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
