import { describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { get, patch, post } from '../../support/server'

// Issue 46, the spec's webhook rules: no new event is queued for a switched-off endpoint and an
// empty `event_types` receives nothing, so the test operation is 409 with nothing recorded; and
// recovery never re-sends a `webhook.test` event that was made for another endpoint.

const ENDPOINTS = '/webhooks/api/v1/endpoints/'
const PUBLIC = 'https://93.184.215.14/hooks/catalog'

async function endpoint(org: TestOrg, body: Record<string, unknown>) {
  const res = await post(ENDPOINTS, { url: PUBLIC, ...body }, org.key)
  expect(res.status).toBe(201)
  return res.json
}

/** Test events about, and deliveries to, the organization's endpoints made here, as stored. */
const secrets = new Map<string, string[]>()
const remember = (org: TestOrg, ep: { signing_secret: string }) =>
  secrets.set(org.key, [...(secrets.get(org.key) ?? []), ep.signing_secret])
const stored = (org: TestOrg) =>
  sql<{ events: number; deliveries: number }>(
    `select (select count(*)::int from events e join webhook_endpoints w on w.id = e.subject_id
               where e.event_type = 'webhook.test' and w.signing_secret = any($1)) as events,
            (select count(*)::int from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
               where w.signing_secret = any($1)) as deliveries`,
    [secrets.get(org.key) ?? []],
  )

describe('the test operation follows the delivery rules', () => {
  test('a switched-off endpoint: 409 conflict naming why, nothing queued', async () => {
    const org = await createOrganization()
    const ep = await endpoint(org, { event_types: ['product.created'], is_active: false })
    remember(org, ep)
    const res = await post(`${ENDPOINTS}${ep.id}/test/`, {}, org.key)
    expectProblem(res, 409, 'conflict')
    expect(res.json.detail).toContain('switched off')
    expect(await stored(org)).toEqual([{ events: 0, deliveries: 0 }])
    expect((await get(`/webhooks/api/v1/deliveries/?endpoint_id=${ep.id}`, org.key)).json.data).toEqual([])
  })

  test('an endpoint with event_types [] : 409 conflict naming why, nothing queued', async () => {
    const org = await createOrganization()
    const ep = await endpoint(org, { event_types: [] })
    remember(org, ep)
    const res = await post(`${ENDPOINTS}${ep.id}/test/`, {}, org.key)
    expectProblem(res, 409, 'conflict')
    expect(res.json.detail).toContain('event_types')
    expect(await stored(org)).toEqual([{ events: 0, deliveries: 0 }])
    // once it subscribes to something, the test goes out
    expect((await patch(`${ENDPOINTS}${ep.id}/`, { event_types: ['product.created'] }, org.key)).status).toBe(200)
    expect((await post(`${ENDPOINTS}${ep.id}/test/`, {}, org.key)).status).toBe(202)
    expect(await stored(org)).toEqual([{ events: 1, deliveries: 1 }])
  })
})

describe('recover', () => {
  test("does not re-send another endpoint's webhook.test event", async () => {
    const org = await createOrganization()
    const since = new Date(Date.now() - 60_000).toISOString()
    const a = await endpoint(org, { event_types: ['webhook.test'] })
    const b = await endpoint(org, { event_types: ['webhook.test'] })
    remember(org, a)
    remember(org, b)
    expect((await post(`${ENDPOINTS}${a.id}/test/`, {}, org.key)).status).toBe(202)
    const res = await post(`${ENDPOINTS}${b.id}/recover/`, { since }, org.key)
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ endpoint_id: b.id, queued: 0 })
    const [bRows] = await sql<{ n: number }>(
      'select count(*)::int n from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id where w.signing_secret = $1',
      [b.signing_secret],
    )
    expect(bRows!.n).toBe(0)
    expect(await stored(org)).toEqual([{ events: 1, deliveries: 1 }])
  })
})
