import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { startServer } from '../../support/process'
import { databaseUrl } from '../../support/server'
import { createRule, ownedProduct } from './support'

// Scans are public and, without a key, limited per address as search is (the main test server's
// limit is raised so other tests can scan freely): this server runs at 5 a minute.
let server: Awaited<ReturnType<typeof startServer>>
let org: TestOrg
beforeAll(async () => {
  server = await startServer({
    DATABASE_URL: databaseUrl,
    ROLE: 'api',
    LOG_LEVEL: 'warn',
    RESOLVER_ANONYMOUS_PER_MINUTE: '5',
  })
  org = await createOrganization()
})
afterAll(() => server.kill('SIGKILL'))

const scan = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.url}${path}`, { headers, redirect: 'manual' })
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null }
}

describe('anonymous resolving rate limit', () => {
  test('5 a minute per address: the 6th anonymous scan is 429 with CORS; a keyed scan is not limited', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/limited' })
    await sql(`delete from rate_limits where key like 'resolve-anonymous:%'`)
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await scan(`/01/${p.gtin}`)
      expect({ status: res.status, location: res.headers.get('location') }).toEqual({
        status: 307,
        location: 'https://brand.example/limited',
      })
      expect(res.headers.get('ratelimit-limit')).toBe('5')
      remaining.push(res.headers.get('ratelimit-remaining')!)
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    const refused = await scan(`/01/${p.gtin}`)
    expectProblem(refused, 429, 'rate_limited')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('access-control-allow-origin')).toBe('*')
    // a made-up X-Forwarded-For is not believed without TRUST_PROXY
    expect((await scan(`/01/${p.gtin}`, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(429)
    const keyed = await scan(`/01/${p.gtin}`, { 'x-api-key': org.key })
    expect(keyed.status).toBe(307)
    expect(keyed.headers.get('ratelimit-limit')).toBeNull()
    const rows = await sql<{ key: string }>(`select key from rate_limits where key like 'resolve-anonymous:%'`)
    expect(rows).toHaveLength(1)
  }, 60_000)
})
