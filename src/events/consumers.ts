import { createHash } from 'node:crypto'
import { inArray } from 'drizzle-orm'
import { db } from '../db/client'
import { defineQueue, type QueueDef, type QueueOptions } from '../db/queues'
import { eventConsumptions, events } from '../db/schema'
import type { Tx } from '../db/tx'
import type { DomainEvent, EventType } from './types'

export type EventHandler = (tx: Tx, event: DomainEvent) => Promise<void>
/** Handles several events in one transaction (in commit-independent order: by creation time). */
export type BatchHandler = (tx: Tx, events: DomainEvent[]) => Promise<void>
export type Consumer = {
  name: string
  types: ReadonlySet<EventType>
  handle: BatchHandler
  queue: QueueDef<{ eventId: string }>
}

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
  options: QueueOptions = {},
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
  options: QueueOptions = {},
): Consumer {
  if (!/^[a-z][a-z0-9_.-]*$/.test(name)) throw new Error(`bad consumer name ${name}`)
  const queue = defineQueue<{ eventId: string }>(`events.consume.${name}`, {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    heartbeatSeconds: 10,
    notify: true,
    ...options,
  })
  const consumer = { name, types: new Set(types), handle, queue }
  registry.set(name, consumer)
  return consumer
}

export const consumers = (): Consumer[] => [...registry.values()]

/** A UUID fixed by consumer and event: the consumer's job for an event is sent at most once. */
function jobId(consumer: string, eventId: string) {
  const h = createHash('sha256').update(`${consumer}\0${eventId}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** The dispatch job: one job per interested consumer for each event (idempotent). */
export async function dispatchEvents(eventIds: string[]) {
  const rows = await db
    .select({ id: events.id, eventType: events.eventType })
    .from(events)
    .where(inArray(events.id, eventIds))
  for (const consumer of registry.values()) {
    const mine = rows.filter((r) => consumer.types.has(r.eventType))
    await consumer.queue.insert(
      db,
      mine.map((r) => ({ id: jobId(consumer.name, r.id), data: { eventId: r.id } })),
    )
  }
}

/** Runs a consumer on the events it has not yet succeeded on, in one transaction; returns how many ran. */
export function consumeEvents(consumer: Consumer, eventIds: string[]): Promise<number> {
  return db.transaction(async (tx) => {
    const fresh = await tx
      .insert(eventConsumptions)
      .values(eventIds.map((eventId) => ({ consumer: consumer.name, eventId })))
      .onConflictDoNothing()
      .returning({ eventId: eventConsumptions.eventId })
    if (fresh.length === 0) return 0
    const rows = await tx
      .select()
      .from(events)
      .where(
        inArray(
          events.id,
          fresh.map((r) => r.eventId),
        ),
      )
      .orderBy(events.created, events.id)
    if (rows.length) await consumer.handle(tx, rows)
    return rows.length
  })
}
