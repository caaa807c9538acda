import { sql } from 'drizzle-orm'
import { unnestRows } from '../db/params'
import { type Executor, inTransaction } from '../db/tx'
import { currentTraceparent } from '../observability/tracing'
import { type EmittedEvent, emitRoutes } from './at-commit'
import { dispatchQueue } from './queues'
import type { NewEvent } from './types'

/**
 * Writes events to the outbox in the caller's transaction (or a new one), runs the at-commit hooks
 * the process routed (at-commit.ts: the webhook fan-out) in it, and sends one dispatch job for the
 * events some subscriber still takes by job. The ids are made here, in order and time-ordered
 * (UUIDv7): a new key lands at the end of the primary key's index instead of on a random page, and
 * the events a dispatch, a subscriber or a delivery's claim reads back by id sit together. The rows
 * go as column arrays in one statement (a feed chunk emits thousands: a multi-row VALUES costs more
 * to build than to run). Each event's `data` is typed by its `eventType` (src/events/types.ts): a
 * payload of another shape fails `tsc`.
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
    const routes = emitRoutes()
    const atCommit: string[] = []
    for (const hook of routes?.hooks ?? []) {
      const types = new Set<string>(hook.events)
      const mine: EmittedEvent[] = rows.filter((e) => types.has(e.eventType))
      if (mine.length === 0) continue
      await hook.run(tx, mine)
      atCommit.push(hook.subscriber)
    }
    // an event no subscriber takes by job needs no dispatch (a process that routed nothing sends all)
    const dispatched = routes ? rows.filter((e) => routes.dispatched.has(e.eventType)).map((e) => e.id) : ids
    if (dispatched.length)
      await dispatchQueue.insert(tx, [
        {
          id: dispatched[0]!,
          data: {
            eventIds: dispatched,
            ...(traceparent ? { traceparent } : {}),
            // dispatch does not send these events to the subscribers whose hooks handled them here
            ...(atCommit.length ? { atCommit } : {}),
          },
        },
      ])
    return ids
  })
}
