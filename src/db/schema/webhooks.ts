import { sql } from 'drizzle-orm'
import { boolean, index, integer, pgTable, text, uuid, varchar } from 'drizzle-orm/pg-core'
import type { EventType } from '../../shared/event-types'
import { organizations } from './accounts'
import { at, created, id, metadata } from './columns'
import { events } from './events'

/**
 * A partner's receiver. Deleting one keeps the row (soft delete, secrets wiped) so its delivery
 * log still names it; every query of live endpoints reads `deleted_at is null`.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    url: varchar({ length: 2048 }).notNull(),
    label: varchar({ length: 255 }).notNull().default(''),
    eventTypes: text().array().$type<EventType[]>().notNull().default(sql`'{}'::text[]`),
    isActive: boolean().notNull().default(true),
    /** Why the service switched the endpoint off (null when a person did, or it is on). */
    disabledReason: text(),
    /** HMAC key; kept readable because every delivery signs with it. */
    signingSecret: text().notNull(),
    /** The secret before the last rotation, still signing (`v1old=`) until 24 h after `rotated_at`. */
    previousSecret: text(),
    rotatedAt: at(),
    /** When the first of the current run of failed attempts happened; null after any success. */
    failingSince: at(),
    /** Failed attempts in a row (any success resets it); at WEBHOOK_CIRCUIT_FAILURES the circuit opens. */
    consecutiveFailures: integer().notNull().default(0),
    /** An open circuit holds the endpoint's deliveries back until then, and then lets one probe through. */
    circuitOpenUntil: at(),
    metadata: metadata(),
    created: created(),
    modified: at().notNull().defaultNow(),
    deletedAt: at(),
  },
  (table) => [index('webhook_endpoints_organization_idx').on(table.organizationId, table.created, table.id)],
)

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** One event to one endpoint: its state and schedule. Its attempts are in `webhook_attempts`. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    endpointId: uuid()
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: uuid()
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    eventType: varchar({ length: 100 }).$type<EventType>().notNull(),
    status: varchar({ length: 20 }).$type<DeliveryStatus>().notNull().default('pending'),
    attempts: integer().notNull().default(0),
    lastAttemptAt: at(),
    nextAttemptAt: at(),
    responseStatus: integer(),
    /**
     * The successful attempt's latency: a success is recorded on the delivery's row alone (its
     * attempt number, time and status above); webhook_attempts holds the failed attempts.
     */
    latencyMs: integer(),
    /**
     * Set while the delivery is scheduled (its next attempt at `next_attempt_at`); each claim of an
     * attempt gets a new one, and an attempt whose token is no longer the delivery's records
     * nothing. Null once settled, and while the delivery waits for its endpoint to be switched on.
     */
    jobToken: uuid(),
    /** While an attempt is in flight: until when its worker holds it (a dead worker's lapses). */
    leaseUntil: at(),
    created: created(),
  },
  (table) => [
    index('webhook_deliveries_organization_idx').on(table.organizationId, table.created, table.id),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId, table.status),
    index('webhook_deliveries_event_idx').on(table.eventId),
    // what the dispatcher scans: each endpoint's scheduled deliveries, soonest first
    index('webhook_deliveries_scheduled_idx')
      .on(table.endpointId, table.nextAttemptAt)
      .where(sql`${table.jobToken} is not null`),
    index('webhook_deliveries_lease_idx').on(table.leaseUntil).where(sql`${table.leaseUntil} is not null`),
  ],
)

/** Every HTTP attempt of a delivery: what came back and how long it took. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: id(),
    deliveryId: uuid()
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer().notNull(),
    responseStatus: integer(),
    latencyMs: integer().notNull(),
    error: text(),
    created: created(),
  },
  (table) => [index('webhook_attempts_delivery_idx').on(table.deliveryId, table.attempt)],
)
