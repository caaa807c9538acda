import { index, jsonb, pgTable, uuid, varchar } from 'drizzle-orm/pg-core'
import { created, id } from './columns'

/**
 * Transactional outbox: one row per domain event, written in the transaction of the change
 * that causes it, so a delivery process can publish every committed change and nothing else.
 */
export const events = pgTable(
  'events',
  {
    id: id(),
    eventType: varchar({ length: 100 }).notNull(),
    organizationId: uuid(),
    /** The resource as the API returns it, at the time of the change. */
    data: jsonb().$type<Record<string, unknown>>().notNull(),
    /** The id of the resource the event is about (for lookups and tests). */
    subjectId: uuid().notNull(),
    created: created(),
  },
  (table) => [index('events_created_idx').on(table.created, table.id), index('events_subject_idx').on(table.subjectId)],
)
