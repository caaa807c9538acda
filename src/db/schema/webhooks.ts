import { sql } from 'drizzle-orm'
import { boolean, check, index, integer, pgTable, primaryKey, text, uuid, varchar } from 'drizzle-orm/pg-core'
import type { EventType } from '../../shared/event-types'
import { organizations } from './accounts'
import { at, created, id, metadata } from './columns'

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

/**
 * One event to one endpoint: its state and its outcome. Inserted once and settled once in place:
 * what a settle changes is in no index, and the table leaves room on each page (fillfactor 50,
 * migration 0033), so the settle is a HOT update. Its schedule is in `webhook_pending_deliveries`,
 * its attempt in flight in `webhook_leases`, its failed attempts in `webhook_attempts`.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: id(),
    // no foreign keys (a lookup and a row lock per delivery, migrations 0033 and 0034): the
    // endpoint's own cascades from its organization, and events are never deleted. The endpoint's
    // is kept by its inserts, which hold the endpoint row locked, and by a trigger that deletes an
    // endpoint's deliveries with it (0034)
    organizationId: uuid().notNull(),
    endpointId: uuid().notNull(),
    eventId: uuid().notNull(),
    eventType: varchar({ length: 100 }).$type<EventType>().notNull(),
    status: varchar({ length: 20 }).$type<DeliveryStatus>().notNull().default('pending'),
    attempts: integer().notNull().default(0),
    lastAttemptAt: at(),
    responseStatus: integer(),
    /**
     * The successful attempt's latency: a success is recorded on the delivery's row alone (its
     * attempt number, time and status above); webhook_attempts holds the failed attempts.
     */
    latencyMs: integer(),
    created: created(),
  },
  (table) => [
    index('webhook_deliveries_organization_idx').on(table.organizationId, table.created, table.id),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId, table.created, table.id),
  ],
)

/**
 * The deliveries still to go out (pending or retrying): one row each, inserted with the delivery,
 * deleted when it settles for good. `next_attempt_at` null: it waits for its endpoint to be switched
 * on. The dispatcher reads only this table and the leases to choose what to claim. An unlogged
 * table (migration 0039: no WAL for its two writes a delivery): emptied by PostgreSQL's crash
 * recovery, it is rebuilt from the deliveries at a worker's start (webhooks/schedule-rebuild.ts).
 */
export const webhookPendingDeliveries = pgTable(
  'webhook_pending_deliveries',
  {
    // no foreign key (migration 0034): inserted only in its delivery's own statement, and deleted
    // with it by a trigger
    deliveryId: uuid().primaryKey(),
    endpointId: uuid().notNull(),
    organizationId: uuid().notNull(),
    eventId: uuid().notNull(),
    /** attempts made so far (the delivery's row has the same once an attempt has settled) */
    attempts: integer().notNull().default(0),
    nextAttemptAt: at(),
  },
  (table) => [index('webhook_pending_deliveries_endpoint_idx').on(table.endpointId, table.nextAttemptAt)],
)

/**
 * An endpoint's slots for attempts in flight (an unlogged table: migration 0033), each holding the
 * claimed delivery, the claim's token and until when its worker holds it (a dead worker's lapses).
 * A slot is made the first time it is needed and then updated in place; an attempt whose token is
 * no longer its slot's records nothing.
 */
export const webhookLeases = pgTable(
  'webhook_leases',
  {
    endpointId: uuid().notNull(),
    slot: integer().notNull(),
    organizationId: uuid().notNull(),
    deliveryId: uuid(),
    token: uuid(),
    leaseUntil: at(),
  },
  (table) => [
    primaryKey({ columns: [table.endpointId, table.slot] }),
    index('webhook_leases_organization_idx').on(table.organizationId),
  ],
)

/**
 * One row while the schedule above is whole (unlogged as well, so a crash empties both): a worker
 * that finds it missing rebuilds the schedule, then writes it (migration 0039).
 */
export const webhookScheduleKept = pgTable(
  'webhook_schedule_kept',
  { kept: boolean().primaryKey().notNull().default(true) },
  (table) => [check('webhook_schedule_kept_one_row', sql`${table.kept}`)],
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
