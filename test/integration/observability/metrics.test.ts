import { describe, expect, test } from 'bun:test'
import { ADMIN, createOrganization, eventually, expectProblem, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { call, get, post } from '../../support/server'

// GET /metrics on the shared test server (ADMIN_TOKEN set, no METRICS_TOKEN): Prometheus text,
// only for the admin token, with every family the issue names moving after real traffic.

const RUNS = '/feeds/api/v1/runs'

/** The value of one sample (`name{labels}` with exactly those label values among its labels), summed. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) total += Number(line.split(' ').pop())
  }
  return total
}

async function scrape() {
  const res = await get('/metrics', undefined, ADMIN)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/plain')
  return res.text
}

describe('/metrics', () => {
  test('is 404 without the admin token or a metrics token, and with a wrong one', async () => {
    expectProblem(await get('/metrics'), 404, 'not_found')
    expectProblem(await get('/metrics', undefined, { authorization: 'Bearer not-the-metrics-token' }), 404, 'not_found')
    expectProblem(await get('/metrics', undefined, { 'x-admin-token': 'x'.repeat(27) }), 404, 'not_found')
    const org = await createOrganization()
    expectProblem(await get('/metrics', org.key), 404, 'not_found')
  })

  test('every family is present and moves after traffic; no label names an organization or a GTIN', async () => {
    const before = await scrape()
    for (const family of [
      'gtin_http_request_duration_seconds',
      'gtin_queue_jobs',
      'gtin_queue_oldest_ready_job_age_seconds',
      'gtin_feed_rows_read_total',
      'gtin_feed_rows_rejected_total',
      'gtin_webhook_delivery_attempts_total',
      'gtin_webhook_endpoints',
      'gtin_resolver_resolutions_total',
      'gtin_search_duration_seconds',
      'gtin_db_pool_connections',
      'gtin_process_cpu_seconds_total',
    ])
      expect(before).toContain(`# TYPE ${family} `)

    const org = await createOrganization()
    const gtin = uniqueGtin()
    expect((await post(PRODUCTS, { gtin, product_name: 'Metered oats' }, org.key)).status).toBe(201)
    expect((await get(`${PRODUCTS}/${gtin}`, org.key)).status).toBe(200)
    expect((await get(`/catalog/api/v1/search?q=${gtin}`, org.key)).status).toBe(200)
    // an unknown GTIN's scan is 404 (not_found); a malformed one is refused (400)
    expect((await get(`/01/${uniqueGtin()}`)).status).toBe(404)
    expect((await get('/01/12345')).status).toBe(400)
    const endpoint = await post(
      '/webhooks/api/v1/endpoints/',
      { url: 'https://93.184.215.14/hooks/metrics', event_types: ['product.updated'] },
      org.key,
    )
    expect(endpoint.status).toBe(201)
    const lines = [
      { code: uniqueGtin(), product_name: 'Metered muesli' },
      { code: 'not-a-gtin', product_name: 'Bad' },
    ]
    const started = await call('POST', `${RUNS}?source=off&file_name=metrics.jsonl`, {
      raw: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
      headers: { 'content-type': 'application/x-ndjson', ...ADMIN },
    })
    expect(started.status).toBe(202)
    const run = await eventually(async () => {
      const got = await call('GET', `${RUNS}/${started.json.id}`, { headers: ADMIN })
      return got.json.status === 'succeeded' || got.json.status === 'failed' ? got.json : null
    }, 30_000)
    expect(run.counts).toMatchObject({ read: 2, rejected: 1 })

    const after = await scrape()
    const created = { method: 'POST', route: '/products/api/v1/products', status: '201' }
    expect(sample(after, 'gtin_http_request_duration_seconds_count', created)).toBe(
      sample(before, 'gtin_http_request_duration_seconds_count', created) + 1,
    )
    const read = { method: 'GET', route: '/products/api/v1/products/:gtin', status: '200' }
    expect(sample(after, 'gtin_http_request_duration_seconds_count', read)).toBeGreaterThan(
      sample(before, 'gtin_http_request_duration_seconds_count', read),
    )
    for (const outcome of ['not_found', 'refused'])
      expect(sample(after, 'gtin_resolver_resolutions_total', { outcome })).toBeGreaterThan(
        sample(before, 'gtin_resolver_resolutions_total', { outcome }),
      )
    const gtinTier = { backend: 'postgres', tier: 'gtin' }
    expect(sample(after, 'gtin_search_duration_seconds_count', gtinTier)).toBe(
      sample(before, 'gtin_search_duration_seconds_count', gtinTier) + 1,
    )
    expect(sample(after, 'gtin_webhook_endpoints', { state: 'closed' })).toBeGreaterThan(
      sample(before, 'gtin_webhook_endpoints', { state: 'closed' }),
    )
    expect(sample(after, 'gtin_feed_rows_read_total')).toBeGreaterThanOrEqual(
      sample(before, 'gtin_feed_rows_read_total') + 2,
    )
    expect(sample(after, 'gtin_feed_rows_rejected_total')).toBeGreaterThanOrEqual(
      sample(before, 'gtin_feed_rows_rejected_total') + 1,
    )
    // the totals are the database's: what the finished chunks hold
    const [stored] = await sql<{ read: number; rejected: number }>(
      `select coalesce(sum(read), 0)::int read, coalesce(sum(rejected), 0)::int rejected from feed_run_chunks where status = 'done'`,
    )
    expect(sample(after, 'gtin_feed_rows_read_total')).toBeLessThanOrEqual(stored!.read)
    expect(sample(after, 'gtin_feed_rows_rejected_total')).toBeLessThanOrEqual(stored!.rejected)
    expect(after).toContain('gtin_queue_jobs{queue="events.dispatch",state="queued"')
    expect(sample(after, 'gtin_db_pool_connections', { state: 'total' })).toBeGreaterThan(0)
    expect(sample(after, 'gtin_metrics_collector_up', { collector: 'queues' })).toBe(1)
    // bounded labels only: no organization id, key, GTIN or raw path
    expect(after).not.toContain(org.id)
    expect(after).not.toContain(gtin)
    expect(after).not.toContain(org.key.slice(0, 12))
  })

  test('is in the OpenAPI document as getMetrics, text/plain', async () => {
    const doc = (await get('/docs/json')).json
    const op = doc.paths['/metrics'].get
    expect(op.operationId).toBe('getMetrics')
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/plain'])
  })
})
