import { sql } from 'drizzle-orm'
import { unnestRows } from '../db/params'
import { type Executor, inTransaction } from '../db/tx'
import { currentTraceparent } from '../observability/tracing'
import { dispatchQueue } from './queues'
import type { NewEvent } from './types'

/**
 * Writes events to the outbox in the caller's transaction (or a new one) with their dispatch jobs.
 * The ids are made here, in order and time-ordered (UUIDv7): a new key lands at the end of the
 * primary key's index instead of on a random page, and the events a dispatch, a subscriber or a
 * delivery's claim reads back by id sit together. The rows go as column arrays in one statement (a
 * feed chunk emits thousands: a multi-row VALUES costs more to build than to run). Each event's
 * `data` is typed by its `eventType` (src/events/types.ts): a payload of another shape fails `tsc`.
 */
export async function emit(ex: Executor, ...list: NewEvent[]): Promise<string[]> {
  if (list.length === 0) return []
  return inTransaction(ex, async (tx) => {
    const ids = list.map(() => Bun.randomUUIDv7())
    const rows = list.map((event, i) => ({ ...event, id: ids[i]! }))
    // the request or job that emits them: their dispatch, consumers and deliveries continue its trace
    const traceparent = currentTraceparent()
    await tx.execute(sql`insert into events (id, event_type, organization_id, subject_id, data, trace_parent)
      select id, event_type, organization_id, subject_id, data, ${traceparent}::varchar from ${unnestRows(rows, 'e', {
        id: ['uuid', (e) => e.id],
        event_type: ['text', (e) => e.eventType],
        organization_id: ['uuid', (e) => e.organizationId],
        subject_id: ['uuid', (e) => e.subjectId],
        data: ['jsonb', (e) => JSON.stringify(e.data)],
      })}`)
    await dispatchQueue.insert(tx, [
      { id: ids[0]!, data: traceparent ? { eventIds: ids, traceparent } : { eventIds: ids } },
    ])
    return ids
  })
}
