import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import pg from 'pg'
import { verifyWebhookSignature } from '../../../src/webhooks/signature'
import { eventually, pendingJobs } from '../../support/eventually'
import { ADMIN, PRODUCTS, uniqueGtin } from '../../support/fixtures'
import { ownDatabase } from '../../support/own-database'
import { startServer } from '../../support/process'
import { type Received, type Reply, startReceiver } from '../../support/receiver'
import { api } from '../../support/server'

// Deliveries to real receivers on loopback: the service runs in development mode (loopback and
// http:// targets allowed) in its own process, on a database of its own, with the retry schedule
// shortened to fractions of a second (its last step, 2 s, is the cap a Retry-After is held to)
// and receivers given 5 s to answer.
const database = ownDatabase('webhooks')
let apiUrl = ''
let server: Awaited<ReturnType<typeof startServer>>
let db: pg.Client
const receivers: ReturnType<typeof startReceiver>[] = []

beforeAll(async () => {
  await database.create()
  server = await startServer({
    DATABASE_URL: database.url,
    APP_ENV: 'development',
    NODE_ENV: 'development',
    WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3,0.3,0.3,0.3,2',
    WEBHOOK_TIMEOUT_SECONDS: '5',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'warn',
  })
  apiUrl = server.url
  db = new pg.Client({ connectionString: database.url })
  await db.connect()
  // a service process of its own: its start takes seconds on a loaded machine
}, 60_000)

afterAll(async () => {
  for (const r of receivers) r.stop()
  server?.kill('SIGTERM')
  await server?.exited
  await db?.end()
  await database.drop()
})

const { call, get, post, patch } = api(() => apiUrl)

async function organization() {
  const body = { name: 'Hooks Org', owner_email: `o${Date.now()}@hooks.test` }
  const { json } = await post('/account/api/v1/organizations', body, undefined, ADMIN)
  return { id: json.organization.id as string, key: json.api_key.key as string }
}

function receiver(respond?: (req: Received, index: number) => Reply) {
  const r = startReceiver(respond)
  receivers.push(r)
  return r
}

async function endpoint(key: string, target: string, eventTypes: string[], extra: Record<string, unknown> = {}) {
  const res = await post(
    '/webhooks/api/v1/endpoints/',
    { url: `${target}/hook`, event_types: eventTypes, ...extra },
    key,
  )
  expect(res.status).toBe(201)
  return res.json as { id: string; signing_secret: string }
}

const createProduct = async (key: string, productName = 'Hook Oats') => {
  const res = await post(PRODUCTS, { gtin: uniqueGtin(), product_name: productName }, key)
  expect(res.status).toBe(201)
  return res.json
}

const deliveries = async (key: string, endpointId: string) =>
  (await get(`/webhooks/api/v1/deliveries/?endpoint_id=${endpointId}&page_size=100`, key)).json.data as any[]

const query = async <T>(text: string, params: unknown[] = []) => (await db.query(text, params)).rows as T[]
// every event dispatched and fanned out, no attempt in flight and none due within the schedule's
// 2 s cap: what would still arrive has arrived (jobs counted again after the deliveries, as an
// attempt may emit an event)
const settled = () =>
  eventually(
    async () => (await pendingJobs(QUEUES, query)) + (await dueDeliveries()) + (await pendingJobs(QUEUES, query)) === 0,
    20_000,
    'webhook deliveries to settle',
  )
const QUEUES = ['events', 'webhooks']
const dueDeliveries = async () =>
  (
    await query<{ n: number }>(
      `select (select count(*)::int from webhook_leases where lease_until > now())
        + (select count(*)::int from webhook_pending_deliveries where next_attempt_at <= now() + interval '2.5 seconds') n`,
    )
  )[0]!.n

describe('fan-out and signing', () => {
  test('each subscribed endpoint gets the event once, signed over the exact bytes sent', async () => {
    const org = await organization()
    const created = receiver()
    const updated = receiver()
    const nothing = receiver()
    const a = await endpoint(org.key, created.url, ['product.created'])
    await endpoint(org.key, updated.url, ['product.updated'])
    await endpoint(org.key, nothing.url, [])
    const product = await createProduct(org.key)
    const [got] = await eventually(() => created.ofType('product.created').length > 0 && created.received)
    expect(got!.event).toMatchObject({
      event_type: 'product.created',
      organization_id: org.id,
      data: { gtin: product.gtin, product_name: 'Hook Oats' },
    })
    expect(got!.event.id).toMatch(/^[23456789A-HJ-NP-Za-km-z]{22}$/)
    expect(Object.keys(got!.event).sort()).toEqual(['created', 'data', 'event_type', 'id', 'organization_id'])
    expect(got!.headers['content-type']).toBe('application/json')
    expect(got!.headers['x-service-event-id']).toBe(got!.event.id)
    expect(got!.headers['x-service-event-type']).toBe('product.created')
    expect(got!.headers['x-service-delivery-attempt']).toBe('1')
    expect(got!.headers.host).toBe(new URL(created.url).host)
    const signature = got!.headers['x-service-signature']!
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(verifyWebhookSignature(a.signing_secret, signature, got!.body)).toBe(true)
    expect(verifyWebhookSignature(a.signing_secret, signature, `${got!.body} `)).toBe(false)

    const delivered = await eventually(async () => {
      const [d] = await deliveries(org.key, a.id)
      return d?.status === 'succeeded' ? d : null
    })
    expect(delivered).toMatchObject({ event_type: 'product.created', attempts: 1, response_status: 200 })
    await settled()
    expect(created.received.length).toBe(1)
    expect(updated.received.length).toBe(0)
    expect(nothing.received.length).toBe(0)
  }, 60_000)

  test('an endpoint created switched off gets no delivery', async () => {
    const org = await organization()
    const on = receiver()
    const off = receiver()
    await endpoint(org.key, on.url, ['product.created'])
    const paused = await endpoint(org.key, off.url, ['product.created'], { is_active: false })
    await createProduct(org.key)
    await eventually(() => on.received.length === 1)
    await settled()
    expect(off.received).toEqual([])
    expect(await deliveries(org.key, paused.id)).toEqual([])
  }, 60_000)
})

describe('retries', () => {
  test('a failing receiver is retried on the schedule, then the delivery is failed', async () => {
    const org = await organization()
    const failing = receiver(() => ({ status: 500 }))
    const ep = await endpoint(org.key, failing.url, ['webhook.test'])
    const test = await call('POST', `/webhooks/api/v1/endpoints/${ep.id}/test/`, { key: org.key })
    expect(test.status).toBe(202)
    const failed = await eventually(async () => {
      const [d] = await deliveries(org.key, ep.id)
      return d?.status === 'failed' ? d : null
    }, 30_000)
    const d = failed
    expect(d).toMatchObject({ attempts: 8, response_status: 500, next_attempt_at: null })
    expect(d.attempt_log.map((a: any) => [a.attempt, a.response_status, a.error])).toEqual(
      Array.from({ length: 8 }, (_, i) => [i + 1, 500, 'HTTP 500']),
    )
    expect(failing.received.map((r) => r.headers['x-service-delivery-attempt'])).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
    ])
    expect(new Set(failing.received.map((r) => r.event.id)).size).toBe(1)
    // the last gap is the schedule's 2 s step (±10 %), the others 0.3 s
    const gaps = failing.received.slice(1).map((r, i) => r.at - failing.received[i]!.at)
    expect(gaps[6]!).toBeGreaterThanOrEqual(1750)
    for (const gap of gaps.slice(0, 6)) expect(gap).toBeGreaterThanOrEqual(250)
  }, 60_000)

  // a success is recorded on the delivery's own row, the failures as attempt rows: the log shows both
  test('a delivery that succeeds after failures logs every attempt, the success with its latency', async () => {
    const org = await organization()
    const flaky = receiver((_req, i) => (i < 2 ? { status: 500 } : { delayMs: 50 }))
    const steady = receiver()
    const ep = await endpoint(org.key, flaky.url, ['webhook.test'])
    const once = await endpoint(org.key, steady.url, ['webhook.test'])
    for (const id of [ep.id, once.id])
      expect((await call('POST', `/webhooks/api/v1/endpoints/${id}/test/`, { key: org.key })).status).toBe(202)
    const succeeded = async (id: string) => {
      const [d] = await deliveries(org.key, id)
      return d?.status === 'succeeded' ? d : null
    }
    const d = await eventually(() => succeeded(ep.id), 15_000)
    expect(d).toMatchObject({ attempts: 3, response_status: 200, next_attempt_at: null })
    expect(d.attempt_log.map((a: any) => [a.attempt, a.response_status, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 500, 'HTTP 500'],
      [3, 200, null],
    ])
    expect(d.attempt_log[2].at).toBe(d.last_attempt_at)
    expect(d.attempt_log[2].latency_ms).toBeGreaterThanOrEqual(40)
    const first = await eventually(() => succeeded(once.id), 15_000)
    expect(first.attempt_log).toEqual([
      { attempt: 1, at: first.last_attempt_at, response_status: 200, latency_ms: expect.any(Number), error: null },
    ])
  }, 60_000)

  test('Retry-After on 503 is honoured, and capped at the longest step', async () => {
    const org = await organization()
    const busy = receiver((_req, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : {}))
    const capped = receiver((_req, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '3600' } } : {}))
    for (const r of [busy, capped]) {
      const ep = await endpoint(org.key, r.url, ['webhook.test'])
      await call('POST', `/webhooks/api/v1/endpoints/${ep.id}/test/`, { key: org.key })
    }
    await eventually(() => busy.received.length === 2 && capped.received.length === 2, 15_000)
    const gap = (r: typeof busy) => r.received[1]!.at - r.received[0]!.at
    expect(gap(busy)).toBeGreaterThanOrEqual(950)
    expect(gap(busy)).toBeLessThan(1900)
    expect(gap(capped)).toBeGreaterThanOrEqual(1950)
    expect(gap(capped)).toBeLessThan(4000)
  }, 60_000)

  test('a redirect is not followed and a receiver that does not answer in time is retried', async () => {
    const org = await organization()
    const elsewhere = receiver()
    const moved = receiver((_req, i) =>
      i === 0 ? { status: 307, headers: { location: `${elsewhere.url}/hook` } } : {},
    )
    const silent = receiver((_req, i) => (i === 0 ? { delayMs: 7000 } : {}))
    const a = await endpoint(org.key, moved.url, ['webhook.test'])
    const b = await endpoint(org.key, silent.url, ['webhook.test'])
    for (const ep of [a, b]) await call('POST', `/webhooks/api/v1/endpoints/${ep.id}/test/`, { key: org.key })
    const settled = async (id: string) => {
      const [d] = await deliveries(org.key, id)
      return d?.status === 'succeeded' ? d : null
    }
    const redirected = await eventually(() => settled(a.id))
    expect(redirected.attempt_log.map((x: any) => [x.response_status, x.error])).toEqual([
      [307, 'HTTP 307'],
      [200, null],
    ])
    expect(elsewhere.received).toEqual([])
    const timedOut = await eventually(() => settled(b.id), 20_000)
    expect(timedOut.attempt_log[0]).toMatchObject({ response_status: null, error: 'timed out after 5 s' })
    expect(timedOut.attempt_log[0].latency_ms).toBeGreaterThanOrEqual(4900)
    expect(timedOut.attempts).toBe(2)
  }, 60_000)

  test('a slow endpoint holds at most 10 deliveries in flight and does not delay another', async () => {
    const org = await organization()
    const slow = receiver(() => ({ delayMs: 3000 }))
    const fast = receiver()
    await endpoint(org.key, slow.url, ['product.created'])
    await endpoint(org.key, fast.url, ['product.created'])
    const started = Date.now()
    await Promise.all(Array.from({ length: 25 }, () => createProduct(org.key)))
    await eventually(() => fast.received.length === 25)
    // every fast delivery arrived while the slow receiver was still on its first ten
    expect(Date.now() - started).toBeLessThan(2900)
    await eventually(() => slow.received.length === 25, 30_000)
    expect(slow.maxInFlight()).toBe(10)
  }, 60_000)
})

describe('pause, resume and disabling', () => {
  test('deliveries queued when an endpoint is paused wait, and go out when it is switched on', async () => {
    const org = await organization()
    const r = receiver((_req, i) => ({ status: i === 0 ? 500 : 200 }))
    const ep = await endpoint(org.key, r.url, ['product.created'])
    await createProduct(org.key)
    await eventually(() => r.received.length === 1)
    // paused before the retry 0.3 s later
    expect((await patch(`/webhooks/api/v1/endpoints/${ep.id}/`, { is_active: false }, org.key)).status).toBe(200)
    await createProduct(org.key) // fanned out while paused: no delivery
    await settled()
    expect(r.received.length).toBe(1)
    const waiting = await deliveries(org.key, ep.id)
    expect(waiting.map((d) => [d.status, d.attempts, d.next_attempt_at])).toEqual([['retrying', 1, null]])
    expect((await patch(`/webhooks/api/v1/endpoints/${ep.id}/`, { is_active: true }, org.key)).status).toBe(200)
    await eventually(() => r.received.length === 2)
    expect(r.received[1]!.event.id).toBe(r.received[0]!.event.id)
    expect(r.received[1]!.headers['x-service-delivery-attempt']).toBe('2')
    const [done] = await eventually(async () => {
      const list = await deliveries(org.key, ep.id)
      return list[0]?.status === 'succeeded' ? list : null
    })
    expect(done).toMatchObject({ attempts: 2, response_status: 200 })
  }, 60_000)

  test('an endpoint failing every delivery for 5 days is switched off, tells the others, and resumes when switched on', async () => {
    const org = await organization()
    let healthy = false
    const broken = receiver(() => ({ status: healthy ? 204 : 500 }))
    const watcher = receiver()
    const ep = await endpoint(org.key, broken.url, ['product.created'])
    const watch = await endpoint(org.key, watcher.url, ['webhook_endpoint.disabled'])
    await db.query("update webhook_endpoints set failing_since = now() - interval '121 hours' where id = $1", [
      (await db.query('select id from webhook_endpoints where signing_secret = $1', [ep.signing_secret])).rows[0].id,
    ])
    await createProduct(org.key)
    const [notice] = await eventually(() => watcher.received.length > 0 && watcher.received)
    expect(notice!.event).toMatchObject({
      event_type: 'webhook_endpoint.disabled',
      data: { id: ep.id, is_active: false },
    })
    expect(notice!.event.data.disabled_reason).toContain('every delivery failed since')
    expect(verifyWebhookSignature(watch.signing_secret, notice!.headers['x-service-signature'], notice!.body)).toBe(
      true,
    )
    const off = (await get(`/webhooks/api/v1/endpoints/${ep.id}/`, org.key)).json
    expect(off).toMatchObject({ is_active: false })
    expect(off.disabled_reason).toContain('120 hours')
    await settled()
    expect(broken.received.length).toBe(1)

    healthy = true
    const on = await patch(`/webhooks/api/v1/endpoints/${ep.id}/`, { is_active: true }, org.key)
    expect(on.json).toMatchObject({ is_active: true, disabled_reason: null })
    await eventually(() => broken.received.length === 2)
    const [d] = await eventually(async () => {
      const list = await deliveries(org.key, ep.id)
      return list[0]?.status === 'succeeded' ? list : null
    })
    expect(d).toMatchObject({ attempts: 2, response_status: 204 })
    const [row] = (
      await db.query('select failing_since from webhook_endpoints where signing_secret = $1', [ep.signing_secret])
    ).rows
    expect(row.failing_since).toBeNull()
  }, 60_000)
})

describe('rotation, resend and recovery', () => {
  test('after a rotation deliveries carry v1 with the new secret, then v1 and v1old with the previous one', async () => {
    const org = await organization()
    const r = receiver()
    const ep = await endpoint(org.key, r.url, ['webhook.test'])
    const rotated = (await call('POST', `/webhooks/api/v1/endpoints/${ep.id}/rotate-secret/`, { key: org.key })).json
    await call('POST', `/webhooks/api/v1/endpoints/${ep.id}/test/`, { key: org.key })
    const [got] = await eventually(() => r.received.length === 1 && r.received)
    const header = got!.headers['x-service-signature']!
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=([0-9a-f]{64}),v1old=\1$/)
    expect(verifyWebhookSignature(rotated.signing_secret, header, got!.body)).toBe(true)
    expect(verifyWebhookSignature(ep.signing_secret, header, got!.body)).toBe(true)
    const newOnly = header.replace(/,v1=[0-9a-f]{64},v1old=.*/, '')
    expect(verifyWebhookSignature(ep.signing_secret, newOnly, got!.body)).toBe(false)
    expect(got!.event).toMatchObject({ event_type: 'webhook.test', data: { endpoint_id: ep.id } })
  }, 60_000)

  test('resend queues the event again as a new delivery', async () => {
    const org = await organization()
    const r = receiver()
    const ep = await endpoint(org.key, r.url, ['product.created'])
    await createProduct(org.key)
    const [first] = await eventually(async () => {
      const list = await deliveries(org.key, ep.id)
      return list[0]?.status === 'succeeded' ? list : null
    })
    const resent = await call('POST', `/webhooks/api/v1/deliveries/${first.id}/retry/`, { key: org.key })
    expect(resent.status).toBe(202)
    expect(resent.json).toMatchObject({ event_id: first.event_id, endpoint_id: ep.id, status: 'pending', attempts: 0 })
    expect(resent.json.id).not.toBe(first.id)
    await eventually(() => r.received.length === 2)
    expect(r.received[1]!.event.id).toBe(r.received[0]!.event.id)
  }, 60_000)

  test('recover re-enqueues every subscribed event since a time, once each', async () => {
    const org = await organization()
    const before = receiver()
    await endpoint(org.key, before.url, ['product.created'])
    await createProduct(org.key, 'Before')
    await eventually(() => before.received.length === 1)
    // no pause needed around `since`: Before was created before its delivery arrived, One and Two
    // are created after `since` is read, on this machine's one clock, and the ISO string rounds
    // down to the millisecond: Before < since <= One, Two (recovery takes created >= since)
    const since = new Date().toISOString()
    await Promise.all([createProduct(org.key, 'One'), createProduct(org.key, 'Two')])
    await eventually(() => before.received.length === 3)
    const r = receiver()
    const ep = await endpoint(org.key, r.url, ['product.created', 'retailer.created'])
    const res = await post(`/webhooks/api/v1/endpoints/${ep.id}/recover/`, { since }, org.key)
    expect(res.status).toBe(202)
    expect(res.json).toEqual({ endpoint_id: ep.id, since, queued: 2 })
    await eventually(() => r.received.length === 2)
    expect(r.received.map((x) => x.event.data.product_name).sort()).toEqual(['One', 'Two'])
    const bad = await post(`/webhooks/api/v1/endpoints/${ep.id}/recover/`, { since: 'yesterday' }, org.key)
    expect(bad.status).toBe(422)
    const future = await post(
      `/webhooks/api/v1/endpoints/${ep.id}/recover/`,
      { since: '2999-01-01T00:00:00Z' },
      org.key,
    )
    expect(future.status).toBe(422)
    await settled()
    expect(r.received.length).toBe(2)
  }, 60_000)
})
