import { describe, expect, test } from 'bun:test'
import { createKey, createOrganization, eventually, expectProblem, sql } from '../../support/fixtures'
import { startReceiver } from '../../support/receiver'
import { del, get, patch, post } from '../../support/server'
import { waitingTestDelivery } from './waiting-delivery'

// The main test server runs with NODE_ENV=test: the production rules for targets apply (HTTPS,
// public addresses). Deliveries themselves are in delivery.test.ts, on a development server.
const ENDPOINTS = '/webhooks/api/v1/endpoints/'
const DELIVERIES = '/webhooks/api/v1/deliveries/'
const PUBLIC = 'https://93.184.215.14/hooks/catalog'
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/

async function createEndpoint(key: string, body: Record<string, unknown> = {}) {
  const res = await post(ENDPOINTS, { url: PUBLIC, event_types: ['product.created'], ...body }, key)
  expect(res.status).toBe(201)
  return res.json
}

describe('endpoint operations', () => {
  test('create returns the endpoint with its secret in full; reads mask it', async () => {
    const org = await createOrganization()
    const res = await post(
      ENDPOINTS,
      { url: PUBLIC, label: 'Main', event_types: ['product.created', 'offer.updated'], metadata: { team: 'ops' } },
      org.key,
    )
    expect(res.status).toBe(201)
    expect(Object.keys(res.json).sort()).toEqual(
      [
        'created',
        'disabled_reason',
        'event_types',
        'id',
        'is_active',
        'label',
        'metadata',
        'modified',
        'signing_secret',
        'url',
      ].sort(),
    )
    expect(res.json).toMatchObject({
      url: PUBLIC,
      label: 'Main',
      event_types: ['product.created', 'offer.updated'],
      is_active: true,
      disabled_reason: null,
      metadata: { team: 'ops' },
    })
    expect(res.json.signing_secret).toMatch(SECRET)
    const [stored] = await sql<{ signing_secret: string }>(
      'select signing_secret from webhook_endpoints where url = $1 and label = $2 order by created desc limit 1',
      [PUBLIC, 'Main'],
    )
    expect(stored!.signing_secret).toBe(res.json.signing_secret)

    const read = await get(`${ENDPOINTS}${res.json.id}/`, org.key)
    expect(read.status).toBe(200)
    expect(read.json.signing_secret).toBe(`${res.json.signing_secret.slice(0, 8)}...`)
    const list = await get(ENDPOINTS, org.key)
    expect(list.json.data.map((e: any) => e.signing_secret)).toEqual([`${res.json.signing_secret.slice(0, 8)}...`])
  })

  test('list paginates and filters by is_active', async () => {
    const org = await createOrganization()
    const a = await createEndpoint(org.key, { label: 'a' })
    const b = await createEndpoint(org.key, { label: 'b', is_active: false })
    const c = await createEndpoint(org.key, { label: 'c' })
    const page = await get(`${ENDPOINTS}?page=2&page_size=2`, org.key)
    expect(page.status).toBe(200)
    expect(page.json.pagination).toEqual({
      page: 2,
      page_size: 2,
      total_count: 3,
      total_pages: 2,
      has_next: false,
      has_previous: true,
    })
    expect(page.json.data.map((e: any) => e.id)).toEqual([c.id])
    const active = await get(`${ENDPOINTS}?is_active=true`, org.key)
    expect(active.json.data.map((e: any) => e.id)).toEqual([a.id, c.id])
    const inactive = await get(`${ENDPOINTS}?is_active=false`, org.key)
    expect(inactive.json.data.map((e: any) => e.id)).toEqual([b.id])
    expectProblem(await get(`${ENDPOINTS}?is_active=maybe`, org.key), 422, 'validation_error')
    expectProblem(await get(`${ENDPOINTS}?page_size=101`, org.key), 422, 'validation_error')
  })

  test('partial update leaves omitted fields alone and merges metadata', async () => {
    const org = await createOrganization()
    const ep = await createEndpoint(org.key, { label: 'before', metadata: { a: '1', b: '2' } })
    const res = await patch(`${ENDPOINTS}${ep.id}/`, { label: 'after', metadata: { b: '', c: '3' } }, org.key)
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      label: 'after',
      url: PUBLIC,
      event_types: ['product.created'],
      is_active: true,
      metadata: { a: '1', c: '3' },
    })
    expect(res.json.signing_secret).toBe(`${ep.signing_secret.slice(0, 8)}...`)
    expect(Date.parse(res.json.modified)).toBeGreaterThan(Date.parse(ep.modified))
    const cleared = await patch(`${ENDPOINTS}${ep.id}/`, { metadata: null, event_types: [] }, org.key)
    expect(cleared.json).toMatchObject({ metadata: {}, event_types: [], label: 'after' })
  })

  test('a signing_secret in an update is 422 and changes nothing', async () => {
    const org = await createOrganization()
    const ep = await createEndpoint(org.key)
    const res = await patch(`${ENDPOINTS}${ep.id}/`, { signing_secret: 'whsec_mine', label: 'x' }, org.key)
    expectProblem(res, 422, 'validation_error')
    const [row] = await sql<{ signing_secret: string; label: string }>(
      'select signing_secret, label from webhook_endpoints where url = $1 and signing_secret = $2',
      [PUBLIC, ep.signing_secret],
    )
    expect(row).toEqual({ signing_secret: ep.signing_secret, label: '' })
  })

  test('bounds: url and label length, event types, metadata, wrong types', async () => {
    const org = await createOrganization()
    const long = `https://93.184.215.14/${'a'.repeat(2048 - 22)}`
    expect(long.length).toBe(2048)
    expect((await post(ENDPOINTS, { url: long }, org.key)).status).toBe(201)
    for (const body of [
      { url: `${long}a` },
      { url: PUBLIC, label: 'x'.repeat(256) },
      { url: PUBLIC, event_types: ['product.*'] },
      { url: PUBLIC, event_types: ['product.created', 'product.created'] },
      { url: PUBLIC, event_types: 'product.created' },
      { url: PUBLIC, is_active: 'yes' },
      { url: null },
      {},
      { url: PUBLIC, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      { url: 'https://93.184.215.14/\u0000' },
    ])
      expectProblem(await post(ENDPOINTS, body, org.key), 422, 'validation_error')
    expect((await get(ENDPOINTS, org.key)).json.pagination.total_count).toBe(1)
  })

  test('delete is 204, cancels its waiting deliveries and keeps the log', async () => {
    const org = await createOrganization()
    const ep = await createEndpoint(org.key, { is_active: false })
    // a delivery queued before the endpoint was switched off waits for it
    const id = await waitingTestDelivery(ep.signing_secret)
    const queued = { json: (await get(`${DELIVERIES}?endpoint_id=${ep.id}`, org.key)).json.data[0] }
    expect(queued.json).toMatchObject({
      id,
      endpoint_id: ep.id,
      event_type: 'webhook.test',
      status: 'pending',
      attempts: 0,
    })
    expect(queued.json.next_attempt_at).toBeNull()
    const res = await del(`${ENDPOINTS}${ep.id}/`, org.key)
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expectProblem(await get(`${ENDPOINTS}${ep.id}/`, org.key), 404, 'not_found')
    expectProblem(await del(`${ENDPOINTS}${ep.id}/`, org.key), 404, 'not_found')
    const log = await get(`${DELIVERIES}?endpoint_id=${ep.id}`, org.key)
    expect(log.json.data.map((d: any) => [d.id, d.status])).toEqual([[queued.json.id, 'cancelled']])
    const [row] = await sql<{ signing_secret: string }>(
      'select signing_secret from webhook_endpoints where deleted_at is not null and label = $1 and organization_id = (select organization_id from webhook_deliveries where event_type = $2 order by created desc limit 1)',
      ['', 'webhook.test'],
    )
    expect(row?.signing_secret).toBe('')
  })

  test('rotate-secret returns a new secret in full', async () => {
    const org = await createOrganization()
    const ep = await createEndpoint(org.key)
    const res = await post(`${ENDPOINTS}${ep.id}/rotate-secret/`, {}, org.key)
    expect(res.status).toBe(200)
    expect(res.json.signing_secret).toMatch(SECRET)
    expect(res.json.signing_secret).not.toBe(ep.signing_secret)
    const [row] = await sql<{ signing_secret: string; previous_secret: string; rotated: boolean }>(
      "select signing_secret, previous_secret, rotated_at > now() - interval '1 minute' as rotated from webhook_endpoints where signing_secret = $1",
      [res.json.signing_secret],
    )
    expect(row).toEqual({ signing_secret: res.json.signing_secret, previous_secret: ep.signing_secret, rotated: true })
  })

  test('deliveries list validates its filters', async () => {
    const org = await createOrganization()
    expectProblem(await get(`${DELIVERIES}?status=lost`, org.key), 422, 'validation_error')
    expectProblem(await get(`${DELIVERIES}?endpoint_id=nope`, org.key), 422, 'validation_error')
    const empty = await get(`${DELIVERIES}?status=failed`, org.key)
    expect(empty.json).toEqual({
      data: [],
      pagination: { page: 1, page_size: 25, total_count: 0, total_pages: 0, has_next: false, has_previous: false },
    })
  })
})

describe('access', () => {
  test('manager keys only', async () => {
    const org = await createOrganization()
    const ep = await createEndpoint(org.key)
    for (const role of ['editor', 'readonly'] as const) {
      const key = await createKey(org, role)
      expectProblem(await get(ENDPOINTS, key), 403, 'forbidden')
      expectProblem(await post(ENDPOINTS, { url: PUBLIC }, key), 403, 'forbidden')
      expectProblem(await patch(`${ENDPOINTS}${ep.id}/`, { label: 'x' }, key), 403, 'forbidden')
      expectProblem(await get(DELIVERIES, key), 403, 'forbidden')
    }
    expectProblem(await get(ENDPOINTS), 401, 'unauthenticated')
  })

  test("another organization's endpoint and deliveries are 404 and unlisted", async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const ep = await createEndpoint(a.key, { is_active: false })
    const queued = { json: { id: await waitingTestDelivery(ep.signing_secret) } }
    const path = `${ENDPOINTS}${ep.id}/`
    expectProblem(await get(path, b.key), 404, 'not_found')
    expectProblem(await patch(path, { label: 'mine' }, b.key), 404, 'not_found')
    expectProblem(await del(path, b.key), 404, 'not_found')
    expectProblem(await post(`${path}rotate-secret/`, {}, b.key), 404, 'not_found')
    expectProblem(await post(`${path}test/`, {}, b.key), 404, 'not_found')
    expectProblem(await post(`${path}recover/`, { since: '2026-01-01T00:00:00Z' }, b.key), 404, 'not_found')
    expectProblem(await post(`${DELIVERIES}${queued.json.id}/retry/`, {}, b.key), 404, 'not_found')
    expect((await get(`${DELIVERIES}?endpoint_id=${ep.id}`, b.key)).json.data).toEqual([])
    expect((await get(ENDPOINTS, b.key)).json.data).toEqual([])
    expect((await get(path, a.key)).json.label).toBe('')
  })
})

describe('targets outside development', () => {
  const refused = [
    'http://93.184.215.14/hook',
    'ftp://93.184.215.14/hook',
    'not a url',
    'https://user:pass@93.184.215.14/hook',
    'https://127.0.0.1/hook',
    'https://127.1.2.3:8443/hook',
    'https://2130706433/hook',
    'https://0x7f.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.1/hook',
    'https://100.64.0.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://224.0.0.1/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[::ffff:169.254.169.254]/hook',
    'https://[fe80::1]/hook',
    'https://[fd00:ec2::254]/hook',
    'https://[ff02::1]/hook',
    'https://[64:ff9b::7f00:1]/hook',
    'https://localhost/hook',
    'https://localhost./hook',
  ]
  test.each(refused)('%s is refused at create (422) and changes nothing', async (url) => {
    const org = await createOrganization()
    const res = await post(ENDPOINTS, { url, event_types: ['product.created'] }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe('url')
    expect((await get(ENDPOINTS, org.key)).json.data).toEqual([])
  })

  test('a private target is refused at update, and the endpoint keeps its URL', async () => {
    const org = await createOrganization()
    const ep = await createEndpoint(org.key)
    const res = await patch(`${ENDPOINTS}${ep.id}/`, { url: 'https://localhost:9/hook', label: 'x' }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.detail).toContain('127.0.0.1')
    expect((await get(`${ENDPOINTS}${ep.id}/`, org.key)).json).toMatchObject({ url: PUBLIC, label: '' })
  })

  test('a target that has come to resolve inside is refused again at delivery, and nothing is sent', async () => {
    const receiver = startReceiver()
    try {
      const org = await createOrganization()
      const ep = await createEndpoint(org.key)
      // the name now resolves to loopback, where a receiver listens (as after a DNS change)
      await sql('update webhook_endpoints set url = $1 where signing_secret = $2', [
        `https://localhost:${receiver.port}/hook`,
        ep.signing_secret,
      ])
      const queued = await post(`${ENDPOINTS}${ep.id}/test/`, {}, org.key)
      expect(queued.status).toBe(202)
      const delivery = await eventually(async () => {
        const d = (await get(`${DELIVERIES}?endpoint_id=${ep.id}`, org.key)).json.data[0]
        return d.attempts > 0 ? d : null
      })
      expect(delivery).toMatchObject({ status: 'retrying', attempts: 1, response_status: null })
      expect(delivery.attempt_log[0].error).toContain('refused: localhost is or resolves to 127.0.0.1')
      expect(receiver.received).toEqual([])
    } finally {
      receiver.stop()
    }
  })
})
