import { describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, PRODUCTS, RETAILERS, sql, uniqueGtin } from '../../support/fixtures'
import { baseUrl, get, patch, post } from '../../support/server'

// HTTP framing at the edge, on a raw socket where a client library would tidy the request up:
// who may send a body is decided before it is read, slow and oversize bodies are bounded, the
// route comes from the path alone, and the server's own refusals are problem+json.

const { hostname, port } = new URL(baseUrl)

type Raw = { status: number; headers: Record<string, string>; body: string; ms: number }

/** Writes `head` (and optional body parts, each after its delay), reads one response. */
function raw(head: string, parts: { after: number; data: string | Buffer }[] = [], timeoutMs = 30_000): Promise<Raw> {
  return new Promise((done, fail) => {
    const began = Date.now()
    const socket = connect(Number(port), hostname)
    let text = ''
    const timers: ReturnType<typeof setTimeout>[] = []
    const finish = () => {
      for (const t of timers) clearTimeout(t)
      socket.destroy()
      const [headText = '', ...rest] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = headText.split('\r\n')
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      )
      done({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), ms: Date.now() - began })
    }
    socket.on('connect', () => {
      socket.write(head)
      for (const part of parts) timers.push(setTimeout(() => socket.writable && socket.write(part.data), part.after))
    })
    socket.on('data', (d) => {
      text += d.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0)
      if (text.length - end - 4 >= length) finish()
    })
    socket.on('error', () => {})
    socket.on('close', () => (text ? finish() : fail(new Error('closed without a response'))))
    timers.push(setTimeout(finish, timeoutMs))
  })
}

const json = (r: Raw) => JSON.parse(r.body.includes('{') ? r.body.slice(r.body.indexOf('{')) : '{}')

describe('before the body is read', () => {
  test('without a valid key, a body for a keyed route is answered 401 at once, not after it arrives', async () => {
    const res = await raw(
      `POST ${RETAILERS} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":`,
      [{ after: 8000, data: '"late"}' }],
    )
    expect(res.status).toBe(401)
    expect(res.headers['content-type']).toStartWith('application/problem+json')
    expect(json(res).code).toBe('unauthenticated')
    expect(res.ms).toBeLessThan(5000)
  }, 20_000)

  test('a body that trickles in is cut off with 408 after 10 s', async () => {
    const org = await createOrganization()
    const parts = Array.from({ length: 20 }, (_, i) => ({ after: 1000 * (i + 1), data: ' ' }))
    const res = await raw(
      `POST ${RETAILERS} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${org.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      parts,
    )
    expect(res.status).toBe(408)
    expect(json(res).code).toBe('request_timeout')
    expect(res.ms).toBeGreaterThanOrEqual(9_500)
    expect(res.ms).toBeLessThan(15_000)
    expect(await sql('select id from retailers where organization_id = $1', [parseId(org.id)])).toEqual([])
  }, 30_000)

  test('a chunked body past 1 MiB is 413 problem+json, not a reset', async () => {
    const org = await createOrganization()
    const chunk = Buffer.from(`${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`)
    const parts = Array.from({ length: 40 }, (_, i) => ({ after: 5 * i, data: chunk })) // 2.5 MiB
    const res = await raw(
      `POST ${RETAILERS} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${org.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      parts,
    )
    expect(res.status).toBe(413)
    expect(res.headers['content-type']).toStartWith('application/problem+json')
    expect(json(res).code).toBe('payload_too_large')
  })
})

describe('the route comes from the path alone', () => {
  test('a one-letter Host header does not shift the path', async () => {
    const org = await createOrganization()
    const shifted = await raw(`GET /ab${RETAILERS} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${org.key}\r\n\r\n`)
    expect(shifted.status).toBe(404)
    expect(json(shifted).code).toBe('not_found')
    const real = await raw(`GET ${RETAILERS} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${org.key}\r\n\r\n`)
    expect(real.status).toBe(200)
    expect(Array.isArray(json(real).data)).toBe(true)
  })

  test('dot segments resolve as RFC 3986 says; what resolves to no route is 404 problem+json, never a redirect', async () => {
    const org = await createOrganization()
    const send = (path: string) => raw(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${org.key}\r\n\r\n`)
    for (const path of [`${RETAILERS}/..`, '/account/api/v1/..', `${RETAILERS}/../../..`]) {
      const res = await send(path)
      expect(res.status).toBe(404)
      expect(res.headers['content-type']).toStartWith('application/problem+json')
      expect(res.headers.location).toBeUndefined()
    }
    // resolved to a declared route's other trailing-slash form: the usual 308 to that route
    const slash = await send(`${RETAILERS}/x/..`)
    expect(slash.status).toBe(308)
    expect(slash.headers.location).toBe(RETAILERS)
    // resolved to a route of another method: 405
    expect((await send('/products/api/v1/barcode/batch/..')).status).toBe(405)
    for (const path of [`${RETAILERS}/../retailers`, '/retailers/api/v1/./retailers']) {
      const res = await send(path)
      expect(res.status).toBe(200) // the list: /retailers/api/v1/retailers
      expect(Array.isArray(json(res).data)).toBe(true)
    }
  })

  test('a method the path does not have is 405 with Allow', async () => {
    const org = await createOrganization()
    const res = await raw(
      `PUT ${RETAILERS} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${org.key}\r\nContent-Length: 0\r\n\r\n`,
    )
    expect(res.status).toBe(405)
    expect(res.headers.allow).toBe('GET, POST')
    expect(json(res).code).toBe('method_not_allowed')
  })

  test('an over-long path and query is 414 problem+json', async () => {
    const res = await get(`${RETAILERS}?search=${'a'.repeat(9000)}`)
    expect(res.status).toBe(414)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.json.code).toBe('uri_too_long')
  })
})

describe('a PATCH that changes nothing', () => {
  test('retailer: no write, no event', async () => {
    const org = await createOrganization()
    const created = await post(RETAILERS, { name: 'Still', metadata: { a: '1' } }, org.key)
    const events = () =>
      sql<{ n: number }>('select count(*)::int n from events where event_type = $1 and data->>$2 = $3', [
        'retailer.updated',
        'id',
        created.json.id,
      ])
    for (const body of [{}, { name: 'Still' }, { metadata: { a: '1' } }, { metadata: { b: '' } }]) {
      const res = await patch(`${RETAILERS}/${created.json.id}`, body, org.key)
      expect(res.status).toBe(200)
      expect(res.json).toEqual(created.json)
    }
    expect((await events())[0]!.n).toBe(0)
    expect((await patch(`${RETAILERS}/${created.json.id}`, { name: 'Moved' }, org.key)).json.name).toBe('Moved')
    expect((await events())[0]!.n).toBe(1)
  })

  test('product: modified unchanged, no candidates, no event', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const created = await post(PRODUCTS, { gtin, product_name: 'Still', metadata: { a: '1' } }, org.key)
    const counts = async () =>
      (
        await sql<{ events: number; candidates: number }>(
          `select (select count(*)::int from events where subject_id = p.id) events,
                  (select count(*)::int from product_candidate_values where product_id = p.id) candidates
           from products p where gtin = $1`,
          [`0${gtin}`],
        )
      )[0]
    const before = await counts()
    for (const body of [{}, { product_name: 'Still' }, { metadata: { a: '1' } }]) {
      const res = await patch(`${PRODUCTS}/${gtin}`, body, org.key)
      expect(res.status).toBe(200)
      expect(res.json.modified).toBe(created.json.modified)
    }
    expect(await counts()).toEqual(before)
    const changed = await patch(`${PRODUCTS}/${gtin}`, { product_name: 'Moved' }, org.key)
    expect(changed.json.modified).not.toBe(created.json.modified)
    expect((await counts())!.events).toBe(before!.events + 1)
  })
})
