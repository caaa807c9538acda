import { defineQueue } from '../db/queues'
import { events } from '../db/schema'
import { type Executor, inTransaction } from '../db/tx'
import type { NewEvent } from './types'

/**
 * One job per event, sent in the event's own transaction: an event exists and is dispatched if and
 * only if its change commits. The job's id is the event's, so dispatching it again is a no-op.
 */
export const dispatchQueue = defineQueue<{ eventId: string }>('events.dispatch', {
  retryLimit: 10,
  retryDelay: 1,
  retryBackoff: true,
  // a worker killed mid-dispatch stops heart-beating; its jobs are retried within seconds
  heartbeatSeconds: 10,
  notify: true,
})

/** Writes events to the outbox in the caller's transaction (or a new one) with their dispatch jobs. */
export async function emit(ex: Executor, ...list: NewEvent[]): Promise<string[]> {
  if (list.length === 0) return []
  return inTransaction(ex, async (tx) => {
    const rows = await tx.insert(events).values(list).returning({ id: events.id })
    await dispatchQueue.insert(
      tx,
      rows.map((r) => ({ id: r.id, data: { eventId: r.id } })),
    )
    return rows.map((r) => r.id)
  })
}
