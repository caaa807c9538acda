import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiError, createSdk, type Sdk } from 'gtin-catalog/sdk'
import { type OpenApiDocument, resourceTypes } from '../../../src/client/generate'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, sql, type TestOrg, uniqueGtin } from '../../support/fixtures'
import { ROOT } from '../../support/process'
import { baseUrl, get } from '../../support/server'

// The SDK's named methods against the real server; its retries against a real receiver on loopback
// that answers as a rate-limited or unavailable service would.
let org: TestOrg
let sdk: Sdk

beforeAll(async () => {
  org = await createOrganization()
  sdk = createSdk({ baseUrl, apiKey: org.key })
})

describe('SDK: named methods', () => {
  test('products: create, retrieve, update, list page by page, unclaim; errors as ApiError', async () => {
    const gtins = [uniqueGtin(), uniqueGtin(), uniqueGtin()]
    for (const gtin of gtins) {
      const created = await sdk.catalog.products.create({ gtin, product_name: `SDK ${gtin}` })
      expect(created.gtin).toBe(gtin.padStart(14, '0'))
    }
    const [first] = gtins as [string]
    expect((await sdk.catalog.products.retrieve(first)).product_name).toBe(`SDK ${first}`)
    const updated = await sdk.catalog.products.update(first, { product_name: 'Renamed by the SDK' })
    expect(updated.product_name).toBe('Renamed by the SDK')
    const [row] = await sql<{ product_name: string }>('select product_name from products where gtin = $1', [
      first.padStart(14, '0'),
    ])
    expect(row!.product_name).toBe('Renamed by the SDK')

    const seen: string[] = []
    const sizes: number[] = []
    for await (const page of sdk.catalog.products.list({ organization_id: org.id, page_size: 2 })) {
      sizes.push(page.data.length)
      seen.push(...page.data.map((p) => p.gtin))
    }
    expect(sizes).toEqual([2, 1])
    expect(seen.sort()).toEqual(gtins.map((g) => g.padStart(14, '0')).sort())
    const items: string[] = []
    for await (const p of sdk.catalog.products.list({ organization_id: org.id, page_size: 1 }).items())
      items.push(p.gtin)
    expect(items).toHaveLength(3)

    const unclaimed = await sdk.catalog.products.unclaim(first)
    expect(unclaimed.is_claimed).toBe(false)
    const missing = await sdk.catalog.products.retrieve(uniqueGtin()).catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(ApiError)
    expect((missing as ApiError).status).toBe(404)
    expect((missing as ApiError).code).toBe('not_found')
    const invalid = await sdk.catalog.products.create({ gtin: '4006381333932' }).catch((e: unknown) => e)
    expect((invalid as ApiError).code).toBe('invalid_gtin')
  })

  test('webhook endpoints: create, list, retrieve, update, delete', async () => {
    const made = await sdk.webhooks.endpoints.create({
      url: 'https://hooks.example.com/sdk',
      event_types: ['product.created'],
    })
    expect(made.signing_secret).toBeTruthy()
    const listed = await sdk.webhooks.endpoints.list().first()
    expect(listed.data.map((e) => e.id)).toContain(made.id)
    expect((await sdk.webhooks.endpoints.retrieve(made.id)).url).toBe('https://hooks.example.com/sdk')
    expect((await sdk.webhooks.endpoints.update(made.id, { label: 'from the SDK' })).label).toBe('from the SDK')
    await sdk.webhooks.endpoints.delete(made.id)
    const gone = await sdk.webhooks.endpoints.retrieve(made.id).catch((e: unknown) => e)
    expect((gone as ApiError).status).toBe(404)
    const [stored] = await sql<{ deleted: boolean }>(
      'select deleted_at is not null as deleted from webhook_endpoints where id = $1',
      [parseId(made.id)],
    )
    expect(stored!.deleted).toBe(true)
  })
})

describe('SDK: retries', () => {
  // What the stand-in service answers, one entry a request, and what it received.
  let script: Response[] = []
  const received: { method: string; key: string | null }[] = []
  const service = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      received.push({ method: request.method, key: request.headers.get('idempotency-key') })
      return script.shift() ?? Response.json({ gtin: '04006381333931' })
    },
  })
  afterAll(() => service.stop(true))
  const local = (extra = {}) =>
    createSdk({ baseUrl: `http://127.0.0.1:${service.port}`, apiKey: 'k', retryDelayMs: 1, ...extra })
  const problem = (status: number, headers: Record<string, string> = {}) =>
    Response.json(
      { status, code: status === 429 ? 'rate_limited' : 'unavailable', detail: 'later' },
      { status, headers },
    )

  test('a 429 with Retry-After and a 503 without are retried; a POST keeps one Idempotency-Key', async () => {
    received.length = 0
    script = [problem(429, { 'retry-after': '0' }), problem(503)]
    const product = await local().catalog.products.create({ gtin: '4006381333931' })
    expect(product.gtin).toBe('04006381333931')
    expect(received).toHaveLength(3)
    expect(new Set(received.map((r) => r.key)).size).toBe(1)
    expect(received[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
  })

  test('retries stop at maxRetries, and a Retry-After beyond maxRetryWaitMs is not waited for', async () => {
    received.length = 0
    script = [problem(503), problem(503), problem(503)]
    const tired = await local({ maxRetries: 2 })
      .catalog.products.retrieve('4006381333931')
      .catch((e: unknown) => e)
    expect((tired as ApiError).status).toBe(503)
    expect(received).toHaveLength(3)
    expect(received[0]!.key).toBeNull() // only a POST carries one

    received.length = 0
    script = [problem(429, { 'retry-after': '3600' })]
    const limited = await local()
      .catalog.products.retrieve('4006381333931')
      .catch((e: unknown) => e)
    expect((limited as ApiError).code).toBe('rate_limited')
    expect(received).toHaveLength(1)
    script = []
  })
})

describe('SDK: types', () => {
  test('resources.ts is what the OpenAPI document generates now', async () => {
    const doc = (await get('/docs/json')).json as OpenApiDocument
    const current = readFileSync(join(ROOT, 'src/client/resources.ts'), 'utf8')
    expect(current).toBe(await resourceTypes(doc))
  })
})
