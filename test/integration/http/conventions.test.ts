import { describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, ORGS, RETAILERS, tableCounts } from '../../support/fixtures'
import { baseUrl, call, get } from '../../support/server'

describe('shared conventions', () => {
  test('every response carries X-Request-Id, echoed when the client sends one', async () => {
    const fresh = await get('/healthz')
    expect(fresh.status).toBe(200)
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await get('/healthz', undefined, { 'x-request-id': 'client-trace-42' })
    expect(echoed.headers.get('x-request-id')).toBe('client-trace-42')
    const unsafe = await get('/healthz', undefined, { 'x-request-id': 'bad id with spaces' })
    expect(unsafe.headers.get('x-request-id')).not.toBe('bad id with spaces')
    const error = await get('/no/such/route', undefined, { 'x-request-id': 'err-7' })
    expect(error.headers.get('x-request-id')).toBe('err-7')
    expect(error.json.request_id).toBe('err-7')
  })

  test('unknown route is a 404 problem', async () => {
    const res = await get('/products/api/v9/nothing')
    expectProblem(res, 404, 'not_found')
  })

  test('malformed JSON is 400 malformed_json and writes nothing', async () => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await call('POST', RETAILERS, {
      key: org.key,
      raw: '{"name": "x",',
      headers: { 'content-type': 'application/json' },
    })
    expectProblem(res, 400, 'malformed_json')
    expect(await tableCounts()).toEqual(before)
  })

  test('a JSON endpoint given another content type is 415', async () => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await call('POST', RETAILERS, {
      key: org.key,
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectProblem(res, 415, 'unsupported_media_type')
    const plain = await call('POST', RETAILERS, {
      key: org.key,
      raw: '{"name":"x"}',
      headers: { 'content-type': 'text/plain' },
    })
    expectProblem(plain, 415, 'unsupported_media_type')
    expect(await tableCounts()).toEqual(before)
  })

  test('a body over 1 MiB is 413, by declared length or by content', async () => {
    const org = await createOrganization()
    const big = JSON.stringify({ name: 'x', category: 'y'.repeat(1024 * 1024) })
    const res = await call('POST', RETAILERS, {
      key: org.key,
      raw: big,
      headers: { 'content-type': 'application/json' },
    })
    expectProblem(res, 413, 'payload_too_large')
    // Streamed without Content-Length: caught while reading.
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big))
        c.close()
      },
    })
    const streamed = await fetch(baseUrl + RETAILERS, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': org.key },
      body: stream,
    })
    expect(streamed.status).toBe(413)
    expect(((await streamed.json()) as { code: string }).code).toBe('payload_too_large')
  })

  test('a body just under 1 MiB is accepted (then validated)', async () => {
    const org = await createOrganization()
    const body = JSON.stringify({ name: 'x', padding: ' '.repeat(1024 * 1024 - 40) })
    expect(body.length).toBeLessThanOrEqual(1024 * 1024)
    const res = await call('POST', RETAILERS, {
      key: org.key,
      raw: body,
      headers: { 'content-type': 'application/json' },
    })
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors).toContainEqual({ field: 'padding', message: 'is not an allowed field' })
  })

  test('the other trailing-slash form redirects (308) to the declared path, never another resource', async () => {
    const org = await createOrganization()
    const res = await get(`${ORGS}/${org.id}/members/?page=2`, org.key)
    expect(res.status).toBe(308)
    expect(res.headers.get('location')).toBe(`${ORGS}/${org.id}/members?page=2`)
    expect((await get(`${RETAILERS}/`, org.key)).status).toBe(308)
    expect((await get('/healthz/')).status).toBe(308)
  })

  test('a route declared with a trailing slash redirects the bare form (308), keeping the query', async () => {
    const { Elysia } = await import('elysia')
    type AnyElysia = import('elysia').AnyElysia
    const { exactPaths } = await import('../../../src/http/exact-paths')
    const { problems } = await import('../../../src/http/problems')
    const app: AnyElysia = new Elysia({ strictPath: true })
      .use(exactPaths(() => app.routes))
      .use(problems)
      .get('/things/', ({ query }) => `ok${query.x ?? ''}`)
    app.listen({ port: 0, hostname: '127.0.0.1' })
    try {
      const base = `http://127.0.0.1:${app.server!.port}`
      const bare = await fetch(`${base}/things?x=1`, { redirect: 'manual' })
      expect(bare.status).toBe(308)
      expect(bare.headers.get('location')).toBe('/things/?x=1')
      expect(await (await fetch(`${base}/things/`)).text()).toBe('ok')
    } finally {
      app.stop(true)
    }
  })

  test('no stack trace, SQL or internal path in an error body', async () => {
    const res = await get(`${ORGS}/${'x'.repeat(22)}/members`, `gck_live_${'A'.repeat(43)}`)
    expectProblem(res, 401, 'unauthenticated')
    expect(res.text).not.toMatch(/at |node_modules|select |\.ts:/i)
  })
})

describe('health and docs', () => {
  test('/healthz and /readyz', async () => {
    expect((await get('/healthz')).json).toEqual({ status: 'ok' })
    const ready = await get('/readyz')
    expect(ready.status).toBe(200)
    expect(ready.json).toEqual({ status: 'ok', checks: { database: 'ok' } })
  })

  test('OpenAPI 3.1 covers every route with schemas and the X-API-Key scheme', async () => {
    const res = await get('/docs/json')
    expect(res.status).toBe(200)
    const doc = res.json
    expect(doc.openapi).toStartWith('3.1')
    expect(doc.components.securitySchemes.ApiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' })
    const expected: [string, string][] = [
      ['post', '/account/api/v1/organizations'],
      ['post', '/account/api/v1/organizations/{organization_id}/api-keys'],
      ['get', '/account/api/v1/organizations/{organization_id}/api-keys'],
      ['delete', '/account/api/v1/organizations/{organization_id}/api-keys/{key_id}'],
      ['get', '/account/api/v1/organizations/{organization_id}/members'],
      ['post', '/account/api/v1/organizations/{organization_id}/members'],
      ['patch', '/account/api/v1/organizations/{organization_id}/members/{member_id}'],
      ['delete', '/account/api/v1/organizations/{organization_id}/members/{member_id}'],
      ['get', '/retailers/api/v1/retailers'],
      ['post', '/retailers/api/v1/retailers'],
      ['get', '/retailers/api/v1/retailers/{id}'],
      ['patch', '/retailers/api/v1/retailers/{id}'],
      ['get', '/healthz'],
      ['get', '/readyz'],
      ['post', '/products/api/v1/products'],
      ['get', '/products/api/v1/products'],
      ['get', '/products/api/v1/products/{gtin}'],
      ['patch', '/products/api/v1/products/{gtin}'],
      ['delete', '/products/api/v1/products/{gtin}'],
      ['post', '/products/api/v1/products/{gtin}/claim'],
      ['post', '/products/api/v1/products/{gtin}/contributions'],
      ['get', '/products/api/v1/products/{gtin}/provenance'],
      ['post', '/products/api/v1/barcode/'],
      ['post', '/products/api/v1/barcode/batch/'],
      ['get', '/products/api/v1/barcode/batch/{id}/'],
      ['get', '/products/api/v1/barcode/batch/{id}/download'],
    ]
    for (const [method, path] of expected) {
      const op = doc.paths[path]?.[method]
      expect(op, `${method} ${path}`).toBeDefined()
      expect(Object.keys(op.responses).length, `${method} ${path} responses`).toBeGreaterThan(0)
      const ok = op.responses['200'] ?? op.responses['201'] ?? op.responses['202'] ?? op.responses['204']
      expect(ok, `${method} ${path} success response`).toBeDefined()
      if (['post', 'patch'].includes(method)) expect(op.requestBody, `${method} ${path} body`).toBeDefined()
    }
    const list = doc.paths['/retailers/api/v1/retailers'].get
    expect(list.security).toEqual([{ ApiKey: [] }])
    const rendered = await call('GET', '/docs')
    expect(rendered.status).toBe(200)
    expect(rendered.headers.get('content-type')).toContain('text/html')
  })
})
