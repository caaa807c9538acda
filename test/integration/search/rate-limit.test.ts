import { afterAll, describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, sql } from '../../support/fixtures'
import { startServer } from '../../support/process'
import { databaseUrl } from '../../support/server'

// The anonymous search limit (spec: 60 a minute per address) is counted in PostgreSQL, so two API
// processes on one database share it. These servers run at the spec's 60 (the main test server's
// limit is raised so other tests can search freely).
const servers: Awaited<ReturnType<typeof startServer>>[] = []
afterAll(() => {
  for (const s of servers) s.kill('SIGKILL')
})
const api = async (env: Record<string, string> = {}) => {
  const server = await startServer({
    DATABASE_URL: databaseUrl,
    ROLE: 'api',
    LOG_LEVEL: 'warn',
    SEARCH_ANONYMOUS_PER_MINUTE: '60',
    ...env,
  })
  servers.push(server)
  return server
}
const searchAt = async (base: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${base}/catalog/api/v1/search?q=anything`, { headers })
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: JSON.parse(text) }
}

describe('anonymous search rate limit', () => {
  test('60 a minute per address across two API processes; the 61st is 429; keys and spoofed headers', async () => {
    await sql(`delete from rate_limits where key like 'search-anonymous:%'`)
    const [a, b] = await Promise.all([api(), api()])
    const remaining: number[] = []
    for (let i = 0; i < 60; i++) {
      const res = await searchAt(i % 2 === 0 ? a.url : b.url)
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBe('60')
      remaining.push(Number(res.headers.get('ratelimit-remaining')))
    }
    // one count across both processes: 59, 58, … 0
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i))
    for (const base of [a.url, b.url]) {
      const refused = await searchAt(base)
      expectProblem(refused, 429, 'rate_limited')
      const retry = Number(refused.headers.get('retry-after'))
      expect(retry).toBeGreaterThan(0)
      expect(retry).toBeLessThanOrEqual(60)
      expect(refused.headers.get('ratelimit-remaining')).toBe('0')
      expect(refused.headers.get('ratelimit-reset')).toBe(String(retry))
    }
    // X-Forwarded-For is not believed without TRUST_PROXY: a made-up address changes nothing
    expect((await searchAt(a.url, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429)
    // a caller with a valid key is not under the anonymous limit
    const org = await createOrganization()
    const keyed = await searchAt(b.url, { 'x-api-key': org.key })
    expect(keyed.status).toBe(200)
    expect(keyed.headers.get('ratelimit-limit')).toBeNull()
  }, 60_000)

  test('behind a trusted proxy (TRUST_PROXY=1), the forwarded client address is counted', async () => {
    await sql(`delete from rate_limits where key like 'search-anonymous:%'`)
    const proxied = await api({ TRUST_PROXY: '1' })
    for (let i = 0; i < 60; i++)
      expect((await searchAt(proxied.url, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200)
    expect((await searchAt(proxied.url, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429)
    // another client behind the same proxy has its own count; so does one in another /64
    expect((await searchAt(proxied.url, { 'x-forwarded-for': '198.51.100.2' })).status).toBe(200)
    const rows = await sql<{ key: string }>(
      `select key from rate_limits where key like 'search-anonymous:%' order by key`,
    )
    expect(rows.map((r) => r.key)).toEqual([
      'search-anonymous:60/60:198.51.100.1',
      'search-anonymous:60/60:198.51.100.2',
    ])
  }, 60_000)
})
