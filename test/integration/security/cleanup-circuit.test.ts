import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eventually } from '../../support/fixtures'
import { ownService } from '../../support/own-service'
import { startReceiver } from '../../support/receiver'

// Issue 44, fair shares (review of the release): an attempt that was already in flight when other
// attempts opened its endpoint's circuit, and then succeeds, closes the circuit. Its success used to
// be judged from the endpoint row read before it was sent (no failures then), so it changed nothing
// and the healthy endpoint stayed held back until a probe.
const ENDPOINTS = '/webhooks/api/v1/endpoints/'

describe('a success closes a circuit that opened while it was in flight (own server process)', () => {
  const service = ownService('circuit_close', {
    APP_ENV: 'development',
    NODE_ENV: 'development',
    WEBHOOK_TIMEOUT_SECONDS: '30',
    WEBHOOK_ENDPOINT_CONCURRENCY: '5',
    WEBHOOK_CIRCUIT_FAILURES: '3',
    // no retry or probe within the test: only the held success can close the circuit
    WEBHOOK_CIRCUIT_OPEN_SECONDS: '3600',
    WEBHOOK_RETRY_SCHEDULE: '3600',
  })
  const { query, call } = service

  type EndpointRow = { consecutive_failures: number; circuit_open_until: Date | null; failing_since: Date | null }
  let endpointId = ''
  const endpointRow = async () =>
    (
      await query<EndpointRow>(
        'select consecutive_failures, circuit_open_until, failing_since from webhook_endpoints where id = $1',
        [endpointId],
      )
    )[0]!

  // the first request is held until the other attempts have opened the circuit, then answered 200;
  // every other request fails at once
  let requests = 0
  const receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch() {
      if (++requests > 1) return new Response('down', { status: 500 })
      await eventually(async () => ((await endpointRow()).circuit_open_until ? true : null), 20_000)
      return new Response('ok')
    },
  })

  beforeAll(() => service.start(), 60_000)
  afterAll(async () => {
    receiver.stop(true)
    await service.stop()
  })

  test('the held success resets the failures and closes the circuit', async () => {
    const org = await call('POST', '/account/api/v1/organizations', undefined, {
      name: 'Circuit',
      owner_email: `circuit-${Date.now()}@circuit.test`,
    })
    expect(org.status).toBe(201)
    const key = org.json.api_key.key as string
    const created = await call('POST', ENDPOINTS, key, {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      event_types: ['webhook.test'],
    })
    expect(created.status).toBe(201)
    endpointId = (
      await query<{ id: string }>('select id from webhook_endpoints where url = $1', [
        `http://127.0.0.1:${receiver.port}/hook`,
      ])
    )[0]!.id

    // the first test delivery goes out and is held; three more fail meanwhile and open the circuit
    expect((await call('POST', `${ENDPOINTS}${created.json.id}/test/`, key)).status).toBe(202)
    await eventually(async () => (requests >= 1 ? true : null))
    for (let i = 0; i < 3; i++)
      expect((await call('POST', `${ENDPOINTS}${created.json.id}/test/`, key)).status).toBe(202)

    // the held attempt succeeds after the circuit opened: the circuit closes (the row reads closed
    // before the failures too, so the wait is for the success to be recorded)
    const succeeded = async () =>
      (
        await query<{ n: number }>(
          `select count(*)::int n from webhook_deliveries where endpoint_id = $1 and status = 'succeeded'`,
          [endpointId],
        )
      )[0]!.n
    const closed = await eventually(async () => {
      if ((await succeeded()) === 0) return null
      const row = await endpointRow()
      return row.consecutive_failures === 0 && row.circuit_open_until === null ? row : null
    }, 20_000)
    expect(closed).toEqual({ consecutive_failures: 0, circuit_open_until: null, failing_since: null })
    const statuses = await query<{ status: string; n: number }>(
      `select status, count(*)::int n from webhook_deliveries where endpoint_id = $1 group by status order by status`,
      [endpointId],
    )
    expect(statuses).toEqual([
      { status: 'retrying', n: 3 },
      { status: 'succeeded', n: 1 },
    ])
    expect(requests).toBe(4)
  }, 60_000)

  test('an endpoint deleted while its delivery is in flight: the delivery records the receiver’s answer', async () => {
    // the README's receiver deletes its endpoint as soon as a delivery arrives; the delivery used to
    // be cancelled under the attempt, and its success lost
    const slow = startReceiver(() => ({ delayMs: 500 }))
    try {
      const org = await call('POST', '/account/api/v1/organizations', undefined, {
        name: 'Deleted In Flight',
        owner_email: `inflight-${Date.now()}@circuit.test`,
      })
      const key = org.json.api_key.key as string
      const created = await call('POST', ENDPOINTS, key, { url: `${slow.url}/hook`, event_types: ['webhook.test'] })
      expect(created.status).toBe(201)
      expect((await call('POST', `${ENDPOINTS}${created.json.id}/test/`, key)).status).toBe(202)
      await eventually(async () => (slow.received.length === 1 ? true : null))
      expect((await call('DELETE', `${ENDPOINTS}${created.json.id}/`, key)).status).toBe(204)
      const settled = await eventually(async () => {
        const rows = await query<{ status: string; response_status: number | null }>(
          `select d.status, d.response_status from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
            where e.url = $1`,
          [`${slow.url}/hook`],
        )
        return rows[0] && rows[0].status !== 'pending' ? rows : null
      }, 20_000)
      expect(settled).toEqual([{ status: 'succeeded', response_status: 200 }])
      expect(slow.received).toHaveLength(1)
    } finally {
      slow.stop()
    }
  }, 60_000)
})
