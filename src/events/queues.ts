import { defineQueue, type QueueDef, type QueueOptions } from '../db/queues'
import type { TraceCarrier } from '../observability/tracing'

/**
 * What dispatch and subscriber jobs carry: the events of one `emit` (a feed chunk emits thousands
 * at once, and a job per event cost more than the events' work). Jobs queued before batches
 * existed carry one `eventId`.
 */
export type EventJobData = { eventIds: string[] } | { eventId: string }
export const eventIdsOf = (data: EventJobData) => ('eventIds' in data ? data.eventIds : [data.eventId])

/**
 * The subscribers whose at-commit hooks (at-commit.ts) handled a dispatch job's events in their
 * emitting transaction: dispatch does not send them those events. Absent in jobs sent before the
 * hooks existed, or by a process that routed none: every subscriber gets its events then.
 */
export type HandledAtCommit = { atCommit?: string[] }

/**
 * One job per `emit` (of the events some subscriber takes by job), sent in the events' own
 * transaction: events exist and are dispatched if and only if their change commits. The job's id is
 * its first event's, so dispatching it again is a no-op.
 */
export const dispatchQueue = defineQueue<EventJobData & TraceCarrier & HandledAtCommit>('events.dispatch', {
  retryLimit: 10,
  retryDelay: 1,
  retryBackoff: true,
  // a worker killed mid-dispatch stops heart-beating; its jobs are retried within seconds
  heartbeatSeconds: 10,
  notify: true,
})

/**
 * A subscriber's own queue (declared in its feature's queues.ts, named `<feature>.<verb>`), with
 * retries and a dead-letter queue, so one that keeps failing never holds up the others.
 */
export function subscriberQueue(
  name: string,
  options: QueueOptions = {},
  renamed: { formerly?: readonly string[] } = {},
): QueueDef<EventJobData> {
  if (!/^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$/.test(name)) throw new Error(`bad subscriber queue name ${name}`)
  return defineQueue<EventJobData>(
    name,
    { retryLimit: 5, retryDelay: 2, retryBackoff: true, heartbeatSeconds: 10, notify: true, ...options },
    renamed,
  )
}
