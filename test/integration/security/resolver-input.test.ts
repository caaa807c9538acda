import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, eventually, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { startServer } from '../../support/process'
import { baseUrl, databaseUrl, get, patch, post } from '../../support/server'
import { createRule, ownedProduct, rulesPath } from '../resolver/support'

// Issue 44, finding 7 (the resolver's part): rule date-times of year 0 or +275760 and an IRI as a
// rule URL gave 500 (the IRI on every scan of its product), `Host: ev%0ail` gave 500, and the
// resolver wrote the request's Host into its Link headers and linkset anchors. Now dates are
// RFC 3339 in years 1000-9999 (422 otherwise), rule URLs are stored and sent percent-encoded, and
// links start with PUBLIC_URL, or behind TRUST_PROXY the proxy's forwarded host, never the Host.

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

type Raw = { status: number; headers: Record<string, string>; body: string }

/** One request on a raw socket, where a client library would not let a Host header through as it is. */
function raw(url: string, path: string, headers: Record<string, string>): Promise<Raw> {
  const { hostname, port } = new URL(url)
  const head = `GET ${path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}Connection: close\r\n\r\n`
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname)
    let text = ''
    socket.on('connect', () => socket.write(head))
    socket.on('data', (d) => {
      text += d.toString('utf8')
    })
    socket.on('error', fail)
    socket.on('close', () => {
      const [headText = '', ...rest] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = headText.split('\r\n')
      done({
        status: Number(statusLine.split(' ')[1]),
        headers: Object.fromEntries(
          lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
        ),
        body: rest.join('\r\n\r\n'),
      })
    })
  })
}

/** A body of chunked transfer encoding, joined. */
const unchunk = (body: string) =>
  /^[0-9a-f]+\r\n/i.test(body)
    ? body
        .split('\r\n')
        .filter((_, i) => i % 2 === 1)
        .join('')
    : body

async function ruleCount() {
  const [row] = await sql<{ n: number }>('select count(*)::int n from resolution_rules where organization_id = $1', [
    parseId(org.id),
  ])
  return row!.n
}

describe('the request Host is never reflected, nor a 500', () => {
  test('Host: ev%0ail and Host: evil.example: scans, linksets and the description name the service', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/host' })
    for (const host of ['ev%0ail', 'evil.example', 'evil.example:443']) {
      const scan = await raw(baseUrl, `/01/${p.gtin}`, { Host: host })
      expect(scan.status).toBe(307)
      expect(scan.headers.location).toBe('https://brand.example/host')
      expect(scan.headers.link).toBe(
        `<${baseUrl}/01/${p.gtin}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`,
      )
      const linkset = await raw(baseUrl, `/01/${p.gtin}?linkType=linkset`, { Host: host })
      expect(linkset.status).toBe(200)
      expect(JSON.parse(unchunk(linkset.body)).linkset[0].anchor).toBe(`${baseUrl}/01/${p.gtin}`)
      const described = await raw(baseUrl, '/.well-known/gs1resolver', { Host: host })
      expect(described.status).toBe(200)
      expect(JSON.parse(unchunk(described.body)).resolverRoot).toBe(baseUrl)
      for (const answer of [scan, linkset, described])
        expect(JSON.stringify(answer)).not.toContain(host.replace(/:.*/, ''))
    }
  })
})

describe('rule date-times are RFC 3339 in years 1000-9999', () => {
  const OUT_OF_RANGE = [
    ['absolute_start_at', '0000-01-01T00:00:00Z'], // the finding: a 500
    ['absolute_end_at', '+275760-09-13T00:00:00Z'], // the finding: a 500
    ['absolute_start_at', '-000001-01-01T00:00:00Z'],
    ['absolute_end_at', '10000-01-01T00:00:00Z'],
    ['absolute_end_at', '2026-05-01'], // a date without a time
    ['absolute_start_at', '2026-05-01T10:00:00'], // a time without a zone
    ['absolute_start_at', '2026-02-30T00:00:00Z'],
    ['absolute_end_at', '9999-12-31T23:59:59-01:00'], // year 10000 in UTC
    ['absolute_start_at', '1000-01-01T00:00:00+01:00'], // year 999 in UTC
    ['absolute_start_at', '0001-01-01T00:00:00Z'], // would read back as 2001
    ['absolute_end_at', '0999-12-31T23:59:59Z'],
  ] as const

  test('year 0, +275760, a bare date and the like are 422 on create and patch, and nothing is stored', async () => {
    const p = await ownedProduct(org)
    const body = { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/dates' }
    const rule = await createRule(org, body)
    const [stored] = await sql('select * from resolution_rules where id = $1', [parseId(rule.id)])
    const before = await ruleCount()
    for (const [field, value] of OUT_OF_RANGE) {
      const created = await post(rulesPath(org), { ...body, [field]: value }, org.key)
      expectProblem(created, 422, 'validation_error')
      expect({ value, fields: created.json.errors.map((e: { field: string }) => e.field) }).toEqual({
        value,
        fields: [field],
      })
      const patched = await patch(`${rulesPath(org)}/${rule.id}`, { [field]: value }, org.key)
      expectProblem(patched, 422, 'validation_error')
      expect(patched.json.errors.map((e: { field: string }) => e.field)).toEqual([field])
    }
    expect(await ruleCount()).toBe(before)
    expect(await sql('select * from resolution_rules where id = $1', [parseId(rule.id)])).toEqual([stored!])
    // the first and the last moment of the range are taken, and read back as written
    const edges = await createRule(org, {
      ...body,
      custom_url: 'https://brand.example/always',
      order_index: 1,
      absolute_start_at: '1000-01-01T00:00:00Z',
      absolute_end_at: '9999-12-31T23:59:59.999Z',
    })
    const read = (await get(`${rulesPath(org)}/${edges.id}`, org.key)).json
    expect([read.absolute_start_at, read.absolute_end_at]).toEqual([
      '1000-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
    ])
  })
})

describe('IRIs in rule URLs', () => {
  test('are stored and redirected to percent-encoded (host in punycode), never a 500', async () => {
    const p = await ownedProduct(org)
    const rule = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      custom_url: 'https://ok.example/€?q=ä',
      section_anchor: 'zutat',
    })
    expect(rule.custom_url).toBe('https://ok.example/%E2%82%AC?q=%C3%A4')
    const scan = await get(`/01/${p.gtin}`)
    expect(scan.status).toBe(307)
    expect(scan.headers.get('location')).toBe('https://ok.example/%E2%82%AC?q=%C3%A4#zutat')
    const idn = await patch(`${rulesPath(org)}/${rule.id}`, { custom_url: 'https://bücher.example/katalog' }, org.key)
    expect(idn.json.custom_url).toBe('https://xn--bcher-kva.example/katalog')
    const [stored] = await sql<{ custom_url: string }>('select custom_url from resolution_rules where id = $1', [
      parseId(rule.id),
    ])
    expect(stored!.custom_url).toBe('https://xn--bcher-kva.example/katalog')
    // ASCII URLs are kept exactly as written
    const ascii = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 1,
      custom_url: 'https://Shop.example/item?ref=qr',
    })
    expect(ascii.custom_url).toBe('https://Shop.example/item?ref=qr')
  })

  test('an IRI stored before this release (and a non-ASCII anchor) still resolves, encoded', async () => {
    const p = await ownedProduct(org)
    const rule = await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://ok.example/a' })
    expect((await get(`/01/${p.gtin}`)).status).toBe(307)
    // written as the old code stored it, then announced to the index as a rule change is
    await sql(`update resolution_rules set custom_url = $2, section_anchor = $3 where id = $1`, [
      parseId(rule.id),
      'https://ok.example/€',
      'zutat-ä',
    ])
    await sql(`select pg_notify('resolver_index', 'rule:' || $1)`, [parseId(rule.id)])
    const scan = await eventually(async () => {
      const res = await get(`/01/${p.gtin}`)
      return res.headers.get('location') === 'https://ok.example/a' ? null : res
    })
    expect(scan.status).toBe(307)
    expect(scan.headers.get('location')).toBe('https://ok.example/%E2%82%AC#zutat-%C3%A4')
    const linkset = await get(`/01/${p.gtin}?linkType=linkset`)
    expect(linkset.status).toBe(200)
    expect(linkset.json.linkset[0]['https://gs1.org/voc/defaultLink'][0].href).toBe(
      'https://ok.example/%E2%82%AC#zutat-%C3%A4',
    )
  })
})

describe('links name PUBLIC_URL, or the trusted proxy’s forwarded host', () => {
  let configured: Awaited<ReturnType<typeof startServer>>
  let proxied: Awaited<ReturnType<typeof startServer>>
  beforeAll(async () => {
    const env = { DATABASE_URL: databaseUrl, ROLE: 'api', LOG_LEVEL: 'warn', RESOLVER_ANONYMOUS_PER_MINUTE: '100000' }
    ;[configured, proxied] = await Promise.all([
      startServer({ ...env, PUBLIC_URL: 'https://id.example.test' }),
      startServer({ ...env, TRUST_PROXY: '127.0.0.1' }),
    ])
  }, 60_000)
  afterAll(() => {
    configured?.kill('SIGKILL')
    proxied?.kill('SIGKILL')
  })

  test('PUBLIC_URL: whatever Host or X-Forwarded-Host says', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/public' })
    const headers = { Host: 'evil.example', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'http' }
    const scan = await eventually(async () => {
      const res = await raw(configured.url, `/01/${p.gtin}`, headers)
      return res.status === 307 ? res : null
    })
    expect(scan.headers.link).toStartWith(`<https://id.example.test/01/${p.gtin}?linkType=linkset>`)
    const linkset = await raw(configured.url, `/01/${p.gtin}?linkType=linkset`, headers)
    expect(JSON.parse(unchunk(linkset.body)).linkset[0].anchor).toBe(`https://id.example.test/01/${p.gtin}`)
    const described = await raw(configured.url, '/.well-known/gs1resolver', headers)
    expect(JSON.parse(unchunk(described.body)).resolverRoot).toBe('https://id.example.test')
  })

  test('TRUST_PROXY: the forwarded proto and host, checked; a bad one is ignored, never a 500', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/proxied' })
    const forwarded = { Host: '127.0.0.1', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'id.example.test' }
    const scan = await eventually(async () => {
      const res = await raw(proxied.url, `/01/${p.gtin}`, forwarded)
      return res.status === 307 ? res : null
    })
    expect(scan.headers.link).toStartWith(`<https://id.example.test/01/${p.gtin}?linkType=linkset>`)
    // the value our proxy appended (the last) counts, not one the client wrote before it
    const appended = await raw(proxied.url, `/01/${p.gtin}?linkType=linkset`, {
      ...forwarded,
      'X-Forwarded-Host': 'evil.example, id.example.test',
    })
    expect(JSON.parse(unchunk(appended.body)).linkset[0].anchor).toBe(`https://id.example.test/01/${p.gtin}`)
    // without a forwarded host, the Host the proxy passed on counts, checked as well
    const passed = await raw(proxied.url, `/01/${p.gtin}`, { Host: 'id.example.test:8443' })
    expect(passed.headers.link).toStartWith(`<http://id.example.test:8443/01/${p.gtin}?linkType=linkset>`)
    const unusable: Record<string, string>[] = [
      { Host: 'ev%0ail' },
      { Host: '127.0.0.1', 'X-Forwarded-Host': 'ev%0ail' },
      { Host: '127.0.0.1', 'X-Forwarded-Host': 'evil.example/path' },
      { Host: '127.0.0.1', 'X-Forwarded-Host': 'a b' },
      { Host: '127.0.0.1', 'X-Forwarded-Host': 'evil.example:99999999' },
    ]
    for (const headers of unusable) {
      const res = await raw(proxied.url, `/01/${p.gtin}`, headers)
      expect(res.status).toBe(307)
      expect(res.headers.link).toStartWith(`<${proxied.url}/01/${p.gtin}?linkType=linkset>`)
    }
  })
})
