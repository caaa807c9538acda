import { createHash } from 'node:crypto'
import { getTableColumns, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { arrayParam } from '../db/params'
import { defineQueue, type QueueDef, type QueueOptions } from '../db/queues'
import { events } from '../db/schema'
import type { Tx } from '../db/tx'
import type { DomainEvent, EventType } from './types'

export type EventHandler = (tx: Tx, event: DomainEvent) => Promise<void>
/** Handles several events in one transaction (in commit-independent order: by creation time). */
export type BatchHandler = (tx: Tx, events: DomainEvent[]) => Promise<void>
/**
 * What dispatch and consumer jobs carry: the events of one `emit` (a feed chunk emits thousands at
 * once, and a job per event cost more than the events' work). Jobs queued before batches existed
 * carry one `eventId`.
 */
export type EventJobData = { eventIds: string[] } | { eventId: string }
export const eventIdsOf = (data: EventJobData) => ('eventIds' in data ? data.eventIds : [data.eventId])

export type Consumer = {
  name: string
  types: ReadonlySet<EventType>
  handle: BatchHandler
  queue: QueueDef<EventJobData>
  /** the handler reads each event's `data` (else it is given `{}`, and the body is never read) */
  withData: boolean
}

/** A consumer's queue options, and `withoutData` for a handler that never reads an event's `data`. */
export type ConsumerOptions = QueueOptions & { withoutData?: boolean }

const registry = new Map<string, Consumer>()

/**
 * Registers a consumer of committed events of the given types. Each consumer has its own queue
 * (`events.consume.<name>`, with retries and a dead-letter queue), so one that keeps failing
 * never holds up the others. The handler runs in a transaction that also records the event as
 * consumed: its writes and that record commit together, so it sees each event once per success.
 */
export function onEvent(
  name: string,
  types: readonly EventType[],
  handle: EventHandler,
  options: ConsumerOptions = {},
): Consumer {
  return onEvents(
    name,
    types,
    async (tx, events) => {
      for (const event of events) await handle(tx, event)
    },
    options,
  )
}

/**
 * A consumer that takes the events of a fetched batch together, in one transaction, so that its
 * statements serve many events at once (webhook fan-out). A batch that fails is retried one event
 * at a time, so one poisoned event fails alone.
 */
export function onEvents(
  name: string,
  types: readonly EventType[],
  handle: BatchHandler,
  { withoutData = false, ...options }: ConsumerOptions = {},
): Consumer {
  if (!/^[a-z][a-z0-9_.-]*$/.test(name)) throw new Error(`bad consumer name ${name}`)
  const queue = defineQueue<EventJobData>(`events.consume.${name}`, {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    heartbeatSeconds: 10,
    notify: true,
    ...options,
  })
  const consumer = { name, types: new Set(types), handle, queue, withData: !withoutData }
  registry.set(name, consumer)
  return consumer
}

export const consumers = (): Consumer[] => [...registry.values()]

/** A UUID fixed by consumer and dispatch job: the consumer's job for a batch is sent at most once. */
function jobId(consumer: string, dispatchJobId: string) {
  const h = createHash('sha256').update(`${consumer}\0${dispatchJobId}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** One dispatch job: its id and the events it carries. */
export type DispatchBatch = { id: string; eventIds: string[] }

/**
 * Dispatch: for each batch, one job per interested consumer carrying the batch's events of its
 * types (idempotent: the job id is fixed by consumer and batch).
 */
export async function dispatchEvents(batches: DispatchBatch[]) {
  const rows = await db
    .select({ id: events.id, eventType: events.eventType })
    .from(events)
    .where(
      sql`${events.id} = any(${arrayParam(
        batches.flatMap((b) => b.eventIds),
        'uuid',
      )})`,
    )
  const typeOf = new Map(rows.map((r) => [r.id, r.eventType]))
  for (const consumer of registry.values()) {
    const jobs = batches.flatMap((batch) => {
      const mine = batch.eventIds.filter((id) => consumer.types.has(typeOf.get(id)!))
      return mine.length ? [{ id: jobId(consumer.name, batch.id), data: { eventIds: mine } }] : []
    })
    await consumer.queue.insert(db, jobs)
  }
}

/** Runs a consumer on the events it has not yet succeeded on, in one transaction; returns how many ran. */
export function consumeEvents(consumer: Consumer, eventIds: string[]): Promise<number> {
  return db.transaction(async (tx) => {
    const fresh = await tx.execute<{ event_id: string }>(sql`insert into event_consumptions (consumer, event_id)
      select ${consumer.name}, id from unnest(${arrayParam(eventIds, 'uuid')}) as e(id)
      on conflict do nothing returning event_id`)
    if (fresh.rows.length === 0) return 0
    // an event's body is its largest part: a feed chunk's thousands of resources
    const rows = await tx
      .select({
        ...getTableColumns(events),
        ...(consumer.withData ? {} : { data: sql<Record<string, unknown>>`'{}'::jsonb` }),
      })
      .from(events)
      .where(
        sql`${events.id} = any(${arrayParam(
          fresh.rows.map((r) => r.event_id),
          'uuid',
        )})`,
      )
      .orderBy(events.created, events.id)
    if (rows.length) await consumer.handle(tx, rows)
    return rows.length
  })
}
