import { afterAll, describe, expect, test } from 'bun:test'
import { sql as drizzleSql } from 'drizzle-orm'
import { db } from '../../../src/db/client'
import { transaction } from '../../../src/db/tx'
import { emit } from '../../../src/events/outbox'
import { dispatchQueue } from '../../../src/events/queues'
import type { NewEvent } from '../../../src/events/types'
import { parseId } from '../../../src/shared/ids'
import { createEndpoint, deleteEndpoint } from '../../../src/webhooks/endpoints'
import { eventually } from '../../support/eventually'
import { createOrganization, sql } from '../../support/fixtures'

// The fan-out runs in the emitting transaction (src/events/at-commit.ts): the test process routes
// its emits as every serving process does (startBackground, in the preload). Its endpoints' circuits
// are held open, so the dispatcher leaves their deliveries alone: the rows are what is observed.

const made: { organizationId: string; id: string }[] = []
afterAll(async () => {
  for (const e of made) await deleteEndpoint(db, e.organizationId, e.id)
})

async function endpoint(organizationId: string, eventTypes: string[], isActive = true) {
  const created = await createEndpoint(
    db,
    organizationId,
    { url: 'http://127.0.0.1:9/hook', event_types: eventTypes as never, is_active: isActive },
    { development: true },
  )
  const id = parseId(created.id)!
  await sql(
    `update webhook_endpoints set consecutive_failures = 1000, circuit_open_until = now() + interval '1 hour' where id = $1`,
    [id],
  )
  made.push({ organizationId, id })
  return id
}

/** An organization with endpoints: recalled (two), updated (two), one switched off, one of no type. */
async function subscribedOrganization() {
  const organizationId = parseId((await createOrganization()).id)!
  return {
    organizationId,
    recalled: await endpoint(organizationId, ['product.recalled']),
    both: await endpoint(organizationId, ['product.recalled', 'product.updated']),
    updated: await endpoint(organizationId, ['product.updated']),
    off: await endpoint(organizationId, ['product.recalled', 'product.updated'], false),
    none: await endpoint(organizationId, []),
  }
}

const productEvent = (eventType: 'product.recalled' | 'product.updated', organizationId: string): NewEvent =>
  ({ eventType, organizationId, subjectId: crypto.randomUUID(), data: { test: 'at commit' } }) as never

const deliveredTo = async (eventId: string) =>
  (
    await sql<{ endpoint_id: string }>('select endpoint_id::text from webhook_deliveries where event_id = $1', [
      eventId,
    ])
  )
    .map((r) => r.endpoint_id)
    .sort()
const consumers = async (eventId: string) =>
  (await sql<{ consumer: string }>('select consumer from event_consumptions where event_id = $1', [eventId]))
    .map((r) => r.consumer)
    .sort()
/**
 * Waits until this event's jobs (its dispatch and the jobs of the subscribers that take it by job)
 * are all completed: the other test files' work on the shared database is not waited for.
 */
const settled = (eventId: string) =>
  eventually(
    async () => {
      const jobs = await sql<{ state: string }>(
        `select state from pgboss.job where data->'eventIds' ? $1 and name not like '%.dead'`,
        [eventId],
      )
      return jobs.length > 0 && jobs.every((j) => j.state === 'completed')
    },
    20_000,
    `the jobs of event ${eventId}`,
  )
const jobsOf = (eventId: string) =>
  sql<{ name: string; data: { eventIds: string[]; atCommit?: string[] } }>(
    `select name, data from pgboss.job where data->'eventIds' ? $1 and name not like '%.dead'`,
    [eventId],
  )

describe('the webhook fan-out at commit', () => {
  test('in the emitting transaction: one due delivery per subscribed active endpoint, no job; none once rolled back', async () => {
    const org = await subscribedOrganization()
    // another organization subscribed to the same type: none of its endpoints gets the event
    await subscribedOrganization()
    let eventId = ''
    const failed = await transaction(async (tx) => {
      eventId = (await emit(tx, productEvent('product.recalled', org.organizationId)))[0]!
      const { rows } = await tx.execute<{ endpoint_id: string; due: boolean }>(
        drizzleSql`select d.endpoint_id::text, p.next_attempt_at is not null as due
          from webhook_deliveries d join webhook_pending_deliveries p on p.delivery_id = d.id
          where d.event_id = ${eventId} order by d.endpoint_id`,
      )
      expect(rows).toEqual([org.recalled, org.both].sort().map((endpoint_id) => ({ endpoint_id, due: true })))
      // no subscriber takes product.recalled by job: nothing to dispatch, no fan-out job
      const jobs = await tx.execute(drizzleSql`select name from pgboss.job where data->'eventIds' ? ${eventId}`)
      expect(jobs.rows).toEqual([])
      throw new Error('roll it back')
    }).catch((err: Error) => err.message)
    expect(failed).toBe('roll it back')
    expect(await deliveredTo(eventId)).toEqual([])
  })

  test('committed: delivered once per endpoint; a subscriber that takes it by job still gets it, the fan-out not', async () => {
    const org = await subscribedOrganization()
    const [eventId] = await emit(db, productEvent('product.updated', org.organizationId))
    expect(await deliveredTo(eventId!)).toEqual([org.both, org.updated].sort())
    const [dispatch] = await jobsOf(eventId!)
    expect(dispatch).toMatchObject({
      name: 'events.dispatch',
      data: { eventIds: [eventId], atCommit: ['webhooks.fan-out'] },
    })
    await settled(eventId!)
    // the resolver's subscriber consumed it; the fan-out's never ran (no record, no second delivery)
    expect(await consumers(eventId!)).toEqual(['resolver.announce'])
    expect(await deliveredTo(eventId!)).toEqual([org.both, org.updated].sort())
  })

  test('an event dispatched without the hook (committed before it existed) is fanned out by the subscriber, once', async () => {
    const org = await subscribedOrganization()
    const eventId = Bun.randomUUIDv7()
    // what emit wrote before the hook: the event and a dispatch job naming no hook
    await transaction(async (tx) => {
      await tx.execute(drizzleSql`insert into events (id, event_type, organization_id, subject_id, data)
        values (${eventId}, 'product.recalled', ${org.organizationId}, ${crypto.randomUUID()}, '{}'::jsonb)`)
      await dispatchQueue.insert(tx, [{ id: eventId, data: { eventIds: [eventId] } }])
    })
    await settled(eventId)
    expect(await deliveredTo(eventId)).toEqual([org.recalled, org.both].sort())
    expect(await consumers(eventId)).toEqual(['webhooks.fan-out'])
  })

  test('an organization without endpoints: the event alone, no delivery and no job', async () => {
    const organizationId = parseId((await createOrganization()).id)!
    const [eventId] = await emit(db, productEvent('product.recalled', organizationId))
    expect(await deliveredTo(eventId!)).toEqual([])
    expect(await jobsOf(eventId!)).toEqual([])
    expect(await sql('select id from events where id = $1', [eventId])).toHaveLength(1)
  })
})
