import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createServer, type Socket } from 'node:net'
import { drained } from '../../support/eventually'
import { createOrganization, eventually, expectProblem, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { ownService } from '../../support/own-service'
import { startReceiver } from '../../support/receiver'
import { get, patch, post } from '../../support/server'

// Issue 44, finding 4 (one tenant starves the others) and finding 7's embedded-IPv4 addresses.
const ENDPOINTS = '/webhooks/api/v1/endpoints/'
const DELIVERIES = '/webhooks/api/v1/deliveries/'
const PUBLIC = 'https://93.184.215.14/hooks/catalog'

describe('embedded-IPv4 IPv6 targets outside development (the shared server, NODE_ENV=test)', () => {
  const embeddingLoopback = [
    'https://[::7f00:1]/hook', // IPv4-compatible
    'https://[::ffff:127.0.0.1]/hook', // IPv4-mapped
    'https://[64:ff9b::7f00:1]/hook', // NAT64
    'https://[2002:7f00:1::]/hook', // 6to4
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo, client 127.0.0.1
    'https://[::a00:1]/hook', // IPv4-compatible 10.0.0.1
    'https://[::ffff:0:a9fe:a9fe]/hook', // IPv4-translated 169.254.169.254
    'https://[64:ff9b:1::5db8:d70e]/hook', // local-use NAT64 (RFC 8215)
  ]
  const endpointCount = async () => (await sql<{ n: number }>('select count(*)::int n from webhook_endpoints'))[0]!.n

  test('each is refused at create (422) and nothing is stored', async () => {
    const org = await createOrganization()
    const before = await endpointCount()
    for (const url of embeddingLoopback) {
      const res = await post(ENDPOINTS, { url, event_types: ['product.created'] }, org.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe('url')
    }
    expect(await endpointCount()).toBe(before)
    expect((await get(ENDPOINTS, org.key)).json.data).toEqual([])
  })

  test('each is refused at update too, and the endpoint keeps its URL', async () => {
    const org = await createOrganization()
    const created = await post(ENDPOINTS, { url: PUBLIC, event_types: ['product.created'] }, org.key)
    expect(created.status).toBe(201)
    for (const url of embeddingLoopback) {
      const res = await patch(`${ENDPOINTS}${created.json.id}/`, { url }, org.key)
      expectProblem(res, 422, 'validation_error')
    }
    const [row] = await sql<{ url: string }>('select url from webhook_endpoints where signing_secret = $1', [
      created.json.signing_secret,
    ])
    expect(row!.url).toBe(PUBLIC)
  })

  test('the detail names the IPv4 address carried', async () => {
    const org = await createOrganization()
    const res = await post(ENDPOINTS, { url: 'https://[::7f00:1]/hook', event_types: [] }, org.key)
    expect(res.json.detail).toContain('127.0.0.1')
  })

  test('the NAT64 form of a public address is a public target (DNS64 networks)', async () => {
    const org = await createOrganization()
    const res = await post(ENDPOINTS, { url: 'https://[64:ff9b::5db8:d70e]/hook', event_types: [] }, org.key)
    expect(res.status).toBe(201)
  })

  test('a stored target carrying loopback is refused again at connection time, and nothing is sent', async () => {
    const receiver = startReceiver()
    try {
      const org = await createOrganization()
      const created = await post(ENDPOINTS, { url: PUBLIC, event_types: ['webhook.test'] }, org.key)
      // as if written before this check existed
      await sql('update webhook_endpoints set url = $1 where signing_secret = $2', [
        `https://[::7f00:1]:${receiver.port}/hook`,
        created.json.signing_secret,
      ])
      expect((await post(`${ENDPOINTS}${created.json.id}/test/`, {}, org.key)).status).toBe(202)
      const delivery = await eventually(async () => {
        const d = (await get(`${DELIVERIES}?endpoint_id=${created.json.id}`, org.key)).json.data[0]
        return d?.attempts > 0 ? d : null
      })
      expect(delivery).toMatchObject({ status: 'retrying', attempts: 1, response_status: null })
      expect(delivery.attempt_log[0].error).toContain('refused: [::7f00:1] is or resolves to ::7f00:1')
      expect(delivery.attempt_log[0].error).toContain('127.0.0.1, a loopback address')
      expect(receiver.received).toEqual([])
    } finally {
      receiver.stop()
    }
  })
})

// The starvation attack on a service of its own: receivers on loopback (development mode), a
// 1 s timeout, 20 attempts in flight, 5 per endpoint, so a few thousand deliveries to a receiver
// that never answers would hold every slot for minutes in creation order (as before this change).
describe('fair shares of the webhook workers (own server process)', () => {
  const service = ownService('fair_deliveries', {
    APP_ENV: 'development',
    NODE_ENV: 'development',
    WEBHOOK_TIMEOUT_SECONDS: '1',
    WEBHOOK_MAX_IN_FLIGHT: '20',
    WEBHOOK_ENDPOINT_CONCURRENCY: '5',
    WEBHOOK_CIRCUIT_FAILURES: '3',
    WEBHOOK_CIRCUIT_OPEN_SECONDS: '2',
  })
  const { call, query } = service
  const sockets = new Set<Socket>()
  let maxOpen = 0
  let connections = 0
  // accepts connections and never answers. A connection is counted once the I/O of this turn of
  // the event loop is handled: a sender's timed-out connection closed just before its next one
  // opened arrives in the same turn, and when the new one's event came first (on a loaded machine,
  // with parallel lanes) the closed one was counted as still open (6 seen against 5 slots)
  const blackHole = createServer((socket) => {
    connections++
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
    setImmediate(() => {
      if (!socket.destroyed) maxOpen = Math.max(maxOpen, sockets.size)
    })
  })
  const receivers: ReturnType<typeof startReceiver>[] = []

  beforeAll(async () => {
    await new Promise<void>((done) => blackHole.listen(0, '127.0.0.1', done))
    await service.start()
  }, 60_000)

  afterAll(async () => {
    for (const s of sockets) s.destroy()
    blackHole.close()
    for (const r of receivers) r.stop()
    await service.stop()
  })

  const organization = async (name: string) => {
    const res = await call('POST', '/account/api/v1/organizations', undefined, {
      name,
      owner_email: `${name.toLowerCase()}-${Date.now()}@fair.test`,
    })
    expect(res.status).toBe(201)
    return { id: res.json.organization.id as string, key: res.json.api_key.key as string }
  }
  /**
   * No event or fan-out job due or running: every product event has been fanned out. (Waiting for
   * the events' queues alone let a loaded machine fan the last product.created out after the
   * endpoints below existed: that event was then delivered live, and `recover` queued 199 of 200.)
   */
  const eventsSettled = () => drained(['events', 'webhooks.fan-out'], query)

  test("thousands of one organization's deliveries to a black hole do not delay another's, and its circuits open", async () => {
    const a = await organization('Flooder')
    const since = new Date(Date.now() - 1000).toISOString()
    const PRODUCTS_N = 200
    const ENDPOINTS_N = 10
    for (let i = 0; i < PRODUCTS_N; i += 20)
      await Promise.all(
        Array.from({ length: 20 }, async () =>
          expect((await call('POST', PRODUCTS, a.key, { gtin: uniqueGtin(), product_name: 'Flood' })).status).toBe(201),
        ),
      )
    await eventsSettled()
    // the attack: endpoints to a receiver that never answers, then `recover` on each
    const endpoints: string[] = []
    for (let i = 0; i < ENDPOINTS_N; i++) {
      const res = await call('POST', ENDPOINTS, a.key, {
        url: `http://127.0.0.1:${(blackHole.address() as { port: number }).port}/hook/${i}`,
        event_types: ['product.created'],
      })
      expect(res.status).toBe(201)
      endpoints.push(res.json.id)
    }
    for (const id of endpoints) {
      const res = await call('POST', `${ENDPOINTS}${id}/recover/`, a.key, { since })
      expect(res.status).toBe(202)
      expect(res.json.queued).toBe(PRODUCTS_N)
    }
    const queued = PRODUCTS_N * ENDPOINTS_N
    await eventually(async () => (connections >= 5 ? true : null))

    // another organization's test delivery arrives within a few seconds
    const b = await organization('Bystander')
    const receiver = startReceiver()
    receivers.push(receiver)
    const ep = await call('POST', ENDPOINTS, b.key, { url: `${receiver.url}/hook`, event_types: ['webhook.test'] })
    expect(ep.status).toBe(201)
    expect((await call('POST', `${ENDPOINTS}${ep.json.id}/test/`, b.key)).status).toBe(202)
    await eventually(async () => (receiver.received.length > 0 ? true : null), 5_000)
    expect(receiver.received[0]!.event).toMatchObject({ event_type: 'webhook.test', organization_id: b.id })
    const delivered = await eventually(async () => {
      const [d] = (await call('GET', `${DELIVERIES}?endpoint_id=${ep.json.id}`, b.key)).json.data
      return d?.status === 'succeeded' ? d : null
    }, 5_000)
    expect(delivered).toMatchObject({ attempts: 1, response_status: 200 })

    // the flooder's deliveries are all still there, waiting or retrying; none lost, none added
    const statuses = await query<{ status: string; n: number }>(
      `select d.status, count(*)::int n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
       where e.url like 'http://127.0.0.1:${(blackHole.address() as { port: number }).port}/%' group by d.status`,
    )
    expect(statuses.every((s) => s.status === 'pending' || s.status === 'retrying')).toBe(true)
    expect(statuses.reduce((n, s) => n + s.n, 0)).toBe(queued)
    // B's one delivery, nothing else of B's
    const [bCount] = await query<{ n: number }>(
      `select count(*)::int n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
       where e.url = $1`,
      [`${receiver.url}/hook`],
    )
    expect(bCount!.n).toBe(1)

    // every endpoint of the flooder has its circuit opened (stored), and held no more than its
    // organization's share (a quarter of 20 slots) of connections at once
    const opened = await eventually(async () => {
      const rows = await query<{ consecutive_failures: number; circuit_open_until: Date | null }>(
        `select consecutive_failures, circuit_open_until from webhook_endpoints where url like 'http://127.0.0.1:%/hook/%'`,
      )
      return rows.length === ENDPOINTS_N && rows.every((r) => r.consecutive_failures >= 3 && r.circuit_open_until)
        ? rows
        : null
      // 30 failures, 5 at a time, each holding its slot for the 1 s timeout and the 1 s a timed-out
      // attempt keeps its lease (leases.ts): 12 s at least, three times that on a loaded machine
    }, 60_000)
    expect(opened.length).toBe(ENDPOINTS_N)
    expect(maxOpen).toBeLessThanOrEqual(5)
    const [timedOut] = await query<{ error: string }>(
      `select a.error from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
       join webhook_endpoints e on e.id = d.endpoint_id where e.url like 'http://127.0.0.1:%/hook/%' limit 1`,
    )
    expect(timedOut!.error).toBe('timed out after 1 s')

    // a success closes a circuit: the endpoint's receiver is fixed, its probe succeeds, its deliveries flow
    const fixed = startReceiver()
    receivers.push(fixed)
    const moved = await call('PATCH', `${ENDPOINTS}${endpoints[0]}/`, a.key, { url: `${fixed.url}/hook` })
    expect(moved.status).toBe(200)
    await eventually(async () => (fixed.received.length >= 10 ? true : null), 20_000)
    const [closed] = await query<{ consecutive_failures: number; circuit_open_until: Date | null }>(
      'select consecutive_failures, circuit_open_until from webhook_endpoints where url = $1',
      [`${fixed.url}/hook`],
    )
    expect(closed).toEqual({ consecutive_failures: 0, circuit_open_until: null })
  }, 120_000)
})
