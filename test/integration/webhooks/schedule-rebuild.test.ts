import { afterAll, beforeAll, expect, test } from 'bun:test'
import type pg from 'pg'
import { toShortId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
import { ADMIN } from '../../support/fixtures'
import { ownDatabase } from '../../support/own-database'
import { startServer } from '../../support/process'
import { startReceiver } from '../../support/receiver'

// The schedule of deliveries still to go out is an unlogged table (migration 0039): PostgreSQL's
// crash recovery empties it, with its marker. What recovery leaves is written here (the deliveries'
// rows, an empty schedule and no marker); a service started on it rebuilds the schedule and sends
// every delivery still to go out once, as its state says.
const database = ownDatabase('hooks_rebuild')
const receiver = startReceiver()
let db: pg.Client
let server: Awaited<ReturnType<typeof startServer>> | null = null

beforeAll(async () => {
  await database.create()
  db = await database.migrated()
}, 60_000)

afterAll(async () => {
  receiver.stop()
  server?.kill('SIGTERM')
  await server?.exited
  await db?.end()
  await database.drop()
})

let orgId = ''
let onEndpoint = ''
const query = async <T>(text: string, params: unknown[] = []) => (await db.query(text, params)).rows as T[]

test('a schedule emptied by crash recovery is rebuilt at start: each delivery still to go out is sent once, as its state says', async () => {
  const [org] = await query<{ id: string }>(`insert into organizations (name) values ('Crashed') returning id`)
  const endpoint = async (path: string, active: boolean, deleted = false) =>
    (
      await query<{ id: string }>(
        `insert into webhook_endpoints (organization_id, url, signing_secret, event_types, is_active, deleted_at)
         values ($1, $2, 'whsec_rebuild', '{product.recalled}', $3, case when $4 then now() end) returning id`,
        [org!.id, `${receiver.url}/${path}`, active, deleted],
      )
    )[0]!.id
  const on = await endpoint('on', true)
  orgId = org!.id
  onEndpoint = on
  const off = await endpoint('off', false)
  const gone = await endpoint('gone', true, true)
  // a delivery as the service leaves it: its status, its attempts and when the last was made
  const delivery = async (endpointId: string, status: string, attempts: number, lastAttempt: string | null) => {
    const [event] = await query<{ id: string }>(
      `insert into events (id, event_type, organization_id, subject_id, data)
       values (gen_random_uuid(), 'product.recalled', $1, gen_random_uuid(), '{"n": 1}') returning id`,
      [org!.id],
    )
    await query(
      `insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type, status, attempts, last_attempt_at)
       values ($1, $2, $3, 'product.recalled', $4, $5, now() - $6::interval)`,
      [org!.id, endpointId, event!.id, status, attempts, lastAttempt],
    )
    return event!.id
  }
  const fresh = await delivery(on, 'pending', 0, null)
  const retryDue = await delivery(on, 'retrying', 1, '1 minute') // its 0.3 s retry delay has passed
  const retryLater = await delivery(on, 'retrying', 2, '1 second') // its retry is an hour after its attempt
  const parked = await delivery(off, 'pending', 0, null)
  const deleted = await delivery(gone, 'pending', 0, null)
  const settled = await delivery(on, 'succeeded', 1, '1 minute')
  // what crash recovery leaves of the unlogged tables: nothing
  expect(await query('select * from webhook_pending_deliveries')).toEqual([])
  await query('delete from webhook_schedule_kept')

  server = await startServer({
    DATABASE_URL: database.url,
    APP_ENV: 'development',
    NODE_ENV: 'development',
    WEBHOOK_RETRY_SCHEDULE: '0.3,3600,3600',
    WEBHOOK_SCHEDULE_CHECK_SECONDS: '0.5',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'warn',
  })
  const fullIds = new Map([fresh, retryDue, retryLater, parked, deleted, settled].map((id) => [toShortId(id), id]))
  const received = (eventId: string) =>
    receiver.received.filter((r) => r.event && fullIds.get(r.event.id) === eventId).length
  const statusOf = async () =>
    new Map(
      (
        await query<{ event_id: string; status: string; next_in_s: number | null; scheduled: boolean }>(
          `select d.event_id, d.status, extract(epoch from p.next_attempt_at - now())::float8 as next_in_s,
             p.delivery_id is not null as scheduled
           from webhook_deliveries d left join webhook_pending_deliveries p on p.delivery_id = d.id
           where d.organization_id = $1`,
          [org!.id],
        )
      ).map((r) => [r.event_id, r]),
    )
  const rows = await eventually(
    async () => {
      const now = await statusOf()
      return now.get(fresh)?.status === 'succeeded' &&
        now.get(retryDue)?.status === 'succeeded' &&
        now.get(deleted)?.status === 'cancelled'
        ? now
        : null
    },
    30_000,
    'the rebuilt schedule to be sent',
  )
  expect(received(fresh)).toBe(1)
  expect(received(retryDue)).toBe(1)
  expect(rows.get(fresh)).toMatchObject({ scheduled: false })
  // an hour after its last attempt, as the retry schedule says
  expect(rows.get(retryLater)).toMatchObject({ status: 'retrying', scheduled: true })
  expect(rows.get(retryLater)!.next_in_s).toBeGreaterThan(3000)
  // waiting for its endpoint to be switched on, as a pause leaves it
  expect(rows.get(parked)).toMatchObject({ status: 'pending', scheduled: true, next_in_s: null })
  expect(rows.get(settled)).toMatchObject({ status: 'succeeded', scheduled: false })
  for (const id of [retryLater, parked, deleted, settled]) expect(received(id)).toBe(0)
  // the marker is back: a later start does not rebuild
  expect(await query('select kept from webhook_schedule_kept')).toEqual([{ kept: true }])
}, 90_000)

test('a schedule emptied while the service runs (PostgreSQL recovered, the workers did not restart) is rebuilt within its check interval', async () => {
  expect(server).not.toBeNull()
  const [event] = await query<{ id: string }>(
    `insert into events (id, event_type, organization_id, subject_id, data)
     values (gen_random_uuid(), 'product.recalled', $1, gen_random_uuid(), '{"n": 2}') returning id`,
    [orgId],
  )
  // a delivery whose schedule row the recovery lost, and the rest of the schedule lost with it
  await query(
    `insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type)
     values ($1, $2, $3, 'product.recalled')`,
    [orgId, onEndpoint, event!.id],
  )
  const before = await query<{ n: number }>('select count(*)::int as n from webhook_pending_deliveries')
  expect(before[0]!.n).toBeGreaterThan(0) // the first test's retry and parked delivery
  await query('delete from webhook_pending_deliveries')
  await query('delete from webhook_schedule_kept')

  const short = toShortId(event!.id)
  await eventually(
    async () => receiver.received.some((r) => r.event?.id === short) || null,
    30_000,
    'the lost delivery to be sent without a restart',
  )
  await eventually(
    async () => {
      const [d] = await query<{ status: string }>('select status from webhook_deliveries where event_id = $1', [
        event!.id,
      ])
      return d!.status === 'succeeded' || null
    },
    10_000,
    'the delivery to be settled',
  )
  expect(receiver.received.filter((r) => r.event?.id === short).length).toBe(1)
  // the others are scheduled again as they were, and the marker is back
  expect(await query('select kept from webhook_schedule_kept')).toEqual([{ kept: true }])
  const again = await query<{ n: number }>('select count(*)::int as n from webhook_pending_deliveries')
  expect(again[0]!.n).toBe(before[0]!.n)
}, 60_000)

test('a recovery waits (503, Retry-After) while the schedule is lost and no worker has rebuilt it yet: it would queue every waiting event again', async () => {
  // only an API process: nothing rebuilds the schedule
  server?.kill('SIGTERM')
  await server?.exited
  server = await startServer({
    DATABASE_URL: database.url,
    APP_ENV: 'development',
    NODE_ENV: 'development',
    ROLE: 'api',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'warn',
  })
  const call = async (path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${server!.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
    return { status: res.status, headers: res.headers, json: (await res.json()) as any }
  }
  const made = await call('/account/api/v1/organizations', { name: 'Replaying', owner_email: 'r@example.test' }, ADMIN)
  expect(made.status).toBe(201)
  const auth = { 'x-api-key': made.json.api_key.key as string }
  const endpoint = await call(
    '/webhooks/api/v1/endpoints/',
    { url: `${receiver.url}/replay`, event_types: ['product.recalled'] },
    auth,
  )
  expect(endpoint.status).toBe(201)
  const deliveries = async () => (await query<{ n: number }>('select count(*)::int as n from webhook_deliveries'))[0]!.n
  const before = await deliveries()
  await query('delete from webhook_schedule_kept')

  const since = new Date(Date.now() - 3600_000).toISOString()
  const refused = await call(`/webhooks/api/v1/endpoints/${endpoint.json.id}/recover/`, { since }, auth)
  expect(refused.status).toBe(503)
  expect(refused.json.code).toBe('service_unavailable')
  expect(refused.headers.get('retry-after')).toBe('5')
  expect(await deliveries()).toBe(before)

  // once rebuilt (its marker back), the recovery runs
  await query('insert into webhook_schedule_kept default values')
  const recovered = await call(`/webhooks/api/v1/endpoints/${endpoint.json.id}/recover/`, { since }, auth)
  expect(recovered.status).toBe(202)
  expect(recovered.json.queued).toBe(0)
}, 60_000)
