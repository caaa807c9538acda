import { index, jsonb, pgTable, primaryKey, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'
import type { EventType } from '../../shared/event-types'
import { created, id } from './columns'

/**
 * Transactional outbox: one row per domain event, written in the transaction of the change that
 * causes it together with its dispatch job (src/events/outbox.ts). Nothing polls this table: the
 * dispatch job hands each event to its consumers (`created` is the transaction's start, not its
 * commit order, so reading by time would lose events).
 */
export const events = pgTable(
  'events',
  {
    id: id(),
    eventType: varchar({ length: 100 }).$type<EventType>().notNull(),
    organizationId: uuid(),
    /** The resource as the API returns it, at the time of the change. */
    data: jsonb().$type<Record<string, unknown>>().notNull(),
    /** The id of the resource the event is about (for lookups and tests). */
    subjectId: uuid().notNull(),
    created: created(),
    /** The W3C traceparent of the request that emitted it, carried into its jobs and deliveries. */
    traceParent: varchar({ length: 55 }),
  },
  (table) => [
    index('events_subject_idx').on(table.subjectId),
    // webhook recovery replays an organization's events since a time
    index('events_organization_created_idx').on(table.organizationId, table.created),
  ],
)

/**
 * Which consumer has handled which event: written in the consumer's own transaction, so a
 * consumer sees an event once per success however often its job is retried. `event_id` has no
 * foreign key: the ids come from the events' own dispatch job, events are never deleted, and the
 * key's check locked each event row once per consumer (a feed chunk's thousands of rows), which
 * doubled the cost of recording them. Whatever deletes events deletes their consumptions too.
 */
export const eventConsumptions = pgTable(
  'event_consumptions',
  {
    consumer: varchar({ length: 100 }).notNull(),
    eventId: uuid().notNull(),
    consumedAt: timestamp({ withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.consumer, table.eventId] })],
)
