import { describe, expect, test } from 'bun:test'
import { boss } from '../../../src/db/boss'
import { db } from '../../../src/db/client'
import { createQueue, type QueueOptions } from '../../../src/db/queues'
import { transaction } from '../../../src/db/tx'
import { emit } from '../../../src/events/outbox'
import { subscriberQueue } from '../../../src/events/queues'
import { consumeEvents, dispatchEvents, type Subscriber, subscriber } from '../../../src/events/subscribers'
import { type DomainEvent, eventBody, type NewEvent } from '../../../src/events/types'
import { startWorker, subscriberWorker } from '../../../src/runtime'
import { toShortId } from '../../../src/shared/ids'
import { drained, eventually } from '../../support/eventually'
import { sql } from '../../support/fixtures'

// webhook.test events: no subscriber of the service's features takes them (the test operation
// addresses its endpoint itself), so only this file's subscribers see these
const event = (subjectId: string): NewEvent<'webhook.test'> => ({
  eventType: 'webhook.test',
  organizationId: null,
  subjectId,
  data: { endpoint_id: subjectId, message: 'outbox test' },
})

/**
 * This file's subscribers: each has its queue and worker in this process. The service's dispatch
 * worker knows only the features' subscribers (src/features.ts), so this file dispatches its
 * committed events to these itself, as that worker does (dispatchEvents).
 */
const subscribers: Subscriber[] = []

async function consumer(
  name: string,
  handle: (tx: unknown, e: DomainEvent<'webhook.test'>) => Promise<void>,
  options: QueueOptions = {},
) {
  const s = subscriber({
    queue: subscriberQueue(name, options),
    events: ['webhook.test'],
    handle: async (tx, events) => {
      for (const e of events) await handle(tx, e)
    },
  })
  await createQueue(s.queue)
  await startWorker(boss, subscriberWorker(s))
  subscribers.push(s)
  return s
}

/** What the dispatch worker does with an emit's job, for this file's subscribers. */
const dispatched = (ids: string[]) => dispatchEvents(subscribers, [{ id: ids[0]!, eventIds: ids }])

/**
 * An event a subscriber of the service's features takes by job (the resolver's announce), so that
 * its emit sends a dispatch job: this process routes its emits (startBackground, in the preload),
 * and an event no subscriber takes by job, such as webhook.test, is not dispatched at all.
 */
const dispatchedEvent = (subjectId: string): NewEvent<'resolution_rule.deleted'> => ({
  eventType: 'resolution_rule.deleted',
  organizationId: null,
  subjectId,
  data: { id: subjectId, outbox: 'test' } as never,
})

const dispatchJobs = (id: string) =>
  sql<{ n: number }>(`select count(*)::int n from pgboss.job where name = 'events.dispatch' and id = $1`, [id])

describe('outbox: events and their dispatch commit with the change', () => {
  test('one emit of several events is one dispatch job carrying them all', async () => {
    const subject = crypto.randomUUID()
    const ids = await transaction((tx) =>
      emit(tx, dispatchedEvent(subject), dispatchedEvent(subject), dispatchedEvent(subject)),
    )
    expect(ids).toHaveLength(3)
    const jobs = await sql<{ id: string; data: { eventIds: string[]; atCommit?: string[] } }>(
      `select id::text, data from pgboss.job where name = 'events.dispatch' and data->'eventIds' ? $1`,
      [ids[1]],
    )
    // the webhook fan-out's hook handled them in the emitting transaction: dispatch skips its subscriber
    expect(jobs).toEqual([{ id: ids[0]!, data: { eventIds: ids, atCommit: ['webhooks.fan-out'] } }])
    const stored = await sql<{ id: string }>('select id from events where subject_id = $1 order by id', [subject])
    expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort())
  })

  test('committed: the event and one dispatch job exist', async () => {
    const subject = crypto.randomUUID()
    const [id] = await transaction((tx) => emit(tx, dispatchedEvent(subject)))
    expect((await sql('select event_type, subject_id from events where id = $1', [id]))[0]).toEqual({
      event_type: 'resolution_rule.deleted',
      subject_id: subject,
    })
    expect((await dispatchJobs(id!))[0]!.n).toBe(1)
  })

  test('an event no subscriber takes by job is stored and not dispatched', async () => {
    const subject = crypto.randomUUID()
    const [id] = await transaction((tx) => emit(tx, event(subject)))
    expect(await sql('select id from events where id = $1', [id])).toHaveLength(1)
    expect((await dispatchJobs(id!))[0]!.n).toBe(0)
  })

  test('rolled back after emit: neither the event nor its dispatch exists', async () => {
    const subject = crypto.randomUUID()
    let emitted: string[] = []
    const failing = transaction(async (tx) => {
      emitted = await emit(tx, dispatchedEvent(subject), dispatchedEvent(subject))
      throw new Error('the change failed after emitting')
    })
    expect(failing).rejects.toThrow('the change failed after emitting')
    await failing.catch(() => {})
    expect(emitted).toHaveLength(2)
    expect(await sql('select id from events where subject_id = $1', [subject])).toEqual([])
    for (const id of emitted) expect((await dispatchJobs(id))[0]!.n).toBe(0)
  })
})

describe('consumers', () => {
  test('a throwing consumer is retried, then dead-lettered, and does not hold up another', async () => {
    const subject = crypto.randomUUID()
    const seen: string[] = []
    let body: ReturnType<typeof eventBody> | null = null
    let attempts = 0
    await consumer('test.steady', async (_tx, e) => {
      if (e.subjectId !== subject) return
      seen.push(e.id)
      body = eventBody(e)
    })
    await consumer(
      'test.failing',
      async (_tx, e) => {
        if (e.subjectId !== subject) return
        attempts++
        throw new Error('consumer bug')
      },
      { retryLimit: 2, retryDelay: 1, retryBackoff: false },
    )
    const [id] = await emit(db, event(subject))
    await dispatched([id!])
    await eventually(() => seen.length === 1, 60_000, 'the steady consumer')
    expect(seen).toEqual([id!])
    // consumers get the committed event; its body is contract §7's
    expect(Object.keys(body!)).toEqual(['id', 'event_type', 'created', 'organization_id', 'data'])
    expect(body!).toMatchObject({ id: toShortId(id!), event_type: 'webhook.test', organization_id: null })
    expect(body!.data).toEqual({ endpoint_id: subject, message: 'outbox test' })
    const dead = () =>
      sql<{ n: number }>(
        `select count(*)::int n from pgboss.job where name = 'test.failing.dead' and data->'eventIds' ? $1`,
        [id],
      )
    await eventually(async () => (await dead())[0]!.n === 1, 60_000, 'the dead letter')
    expect(attempts).toBe(3) // the first try and two retries
    const consumed = await sql<{ consumer: string }>(
      'select consumer from event_consumptions where event_id = $1 order by consumer',
      [id],
    )
    expect(consumed.map((c) => c.consumer)).toEqual(['test.steady'])
  }, 60_000)

  test('a batch with one poisoned event: the others are consumed, the poisoned one alone is dead-lettered', async () => {
    const subject = crypto.randomUUID()
    const seen: string[] = []
    let poisoned = ''
    await consumer(
      'test.batch-poison',
      async (_tx, e) => {
        if (e.subjectId !== subject) return
        if (e.id === poisoned) throw new Error('poisoned event')
        seen.push(e.id)
      },
      { retryLimit: 1, retryDelay: 1, retryBackoff: false },
    )
    const ids = await transaction(async (tx) => {
      const list = await emit(tx, event(subject), event(subject), event(subject), event(subject))
      poisoned = list[2]!
      return list
    })
    await dispatched(ids)
    const healthy = ids.filter((id) => id !== poisoned).sort()
    // a batch that failed together was rolled back: its handler may have seen an event more than once
    await eventually(() => healthy.every((id) => seen.includes(id)), 60_000, 'the healthy events')
    expect(seen).not.toContain(poisoned)
    const dead = () =>
      sql<{ n: number }>(
        `select count(*)::int n from pgboss.job where name = 'test.batch-poison.dead' and data->'eventIds' ? $1`,
        [poisoned],
      )
    await eventually(async () => (await dead())[0]!.n === 1, 60_000, 'the dead letter')
    const consumed = await sql<{ event_id: string }>(
      `select event_id::text from event_consumptions where consumer = 'test.batch-poison' and event_id = any($1::uuid[])`,
      [ids],
    )
    expect(consumed.map((c) => c.event_id).sort()).toEqual(healthy)
  }, 60_000)

  test('a consumer handles only the events it has not consumed yet, when some of them it has', async () => {
    // consumeEvents straight, no queue: the records are inserted plainly first and, when some exist
    // (a job run again), again skipping those; either way each event is handled once
    const handled: string[] = []
    const s = subscriber({
      queue: subscriberQueue('test.once-each'),
      events: ['webhook.test'],
      handle: async (_tx, events) => {
        handled.push(...events.map((e) => e.id))
      },
    })
    const subject = crypto.randomUUID()
    const [a, b, c] = await emit(db, event(subject), event(subject), event(subject))
    expect(await consumeEvents(s, [a!, b!])).toBe(2)
    expect(await consumeEvents(s, [a!, b!, c!])).toBe(1)
    expect(await consumeEvents(s, [c!, a!])).toBe(0)
    expect(handled.sort()).toEqual([a!, b!, c!].sort())
    expect(handled.filter((id) => id === c)).toHaveLength(1)
    const consumed = await sql<{ n: number }>(
      `select count(*)::int n from event_consumptions where consumer = 'test.once-each' and event_id = any($1::uuid[])`,
      [[a, b, c]],
    )
    expect(consumed[0]!.n).toBe(3)
  })

  test('two consumers each see every one of 1,000 events emitted concurrently, once', async () => {
    const subject = crypto.randomUUID()
    const seen = { a: [] as string[], b: [] as string[] }
    await consumer('test.all-a', async (_tx, e) => {
      if (e.subjectId === subject) seen.a.push(e.id)
    })
    await consumer('test.all-b', async (_tx, e) => {
      if (e.subjectId === subject) seen.b.push(e.id)
    })
    // 1,000 transactions, 64 in flight at once (four times the pool): concurrent enough for every race
    // between emitters and consumers, without a thousand waiting on the pool's connect timeout (5 s),
    // which a loaded machine exceeded
    const ids: string[] = []
    let left = 1000
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (left-- > 0) {
          const one = await transaction((tx) => emit(tx, event(subject)))
          await dispatched(one)
          ids.push(...one)
        }
      }),
    )
    expect(new Set(ids).size).toBe(1000)
    await eventually(() => seen.a.length >= 1000 && seen.b.length >= 1000, 90_000, 'both consumers')
    // nothing left to run or due in either queue (a short retry included): no duplicate can follow
    await drained(['test.all-a', 'test.all-b'], sql, { dueWithin: 5_000 })
    for (const list of [seen.a, seen.b]) {
      expect(list).toHaveLength(1000)
      expect(new Set(list)).toEqual(new Set(ids))
    }
  }, 120_000)
})
