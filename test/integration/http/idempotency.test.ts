import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
import {
  ADMIN,
  createKey,
  createOrganization,
  expectProblem,
  ORGS,
  PRODUCTS,
  sql,
  uniqueGtin,
} from '../../support/fixtures'
import { call, post } from '../../support/server'

// Idempotency-Key on POSTs (Stripe's rules): a replay answers the stored response without doing
// the work again; another request with the key is 422; a concurrent one is 409; without the
// header nothing changes. Checked through real HTTP and the rows stored.

const keyed = (key: string) => ({ 'idempotency-key': key })
const newKey = () => `idem-${crypto.randomUUID()}`
const products = (gtin: string) =>
  sql<{ n: number }>('select count(*)::int n from products where gtin = $1', [`0${gtin}`])
const events = (gtin: string) =>
  sql<{ n: number }>(
    `select count(*)::int n from events e join products p on p.id = e.subject_id
      where p.gtin = $1 and e.event_type = 'product.created'`,
    [`0${gtin}`],
  )

describe('Idempotency-Key', () => {
  test('the same key and body replays the stored response without creating again', async () => {
    const org = await createOrganization()
    const key = newKey()
    const gtin = uniqueGtin()
    const body = { gtin, product_name: 'Once oats' }
    const first = await post(PRODUCTS, body, org.key, keyed(key))
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await post(PRODUCTS, body, org.key, keyed(key))
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json).toEqual(first.json)
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'))
    // one product, one event; the stored answer is the first response
    expect((await products(gtin))[0]!.n).toBe(1)
    expect((await events(gtin))[0]!.n).toBe(1)
    const [row] = await sql<{ status: number; body: Buffer; scope: string; hash: string }>(
      `select response_status status, response_body body, scope, request_hash hash from idempotency_keys where key = $1`,
      [key],
    )
    expect(row!.status).toBe(201)
    expect(JSON.parse(row!.body.toString())).toEqual(first.json)
    expect(row!.scope).toBe(`org:${parseId(org.id)}`)
    expect(row!.hash).toMatch(/^[0-9a-f]{64}$/)
    // without the header the same body is a new request: 409 gtin_exists as always
    expectProblem(await post(PRODUCTS, body, org.key), 409, 'gtin_exists')
  })

  test('the same key with another body is 422 naming the header, and changes nothing', async () => {
    const org = await createOrganization()
    const key = newKey()
    const gtin = uniqueGtin()
    expect((await post(PRODUCTS, { gtin, product_name: 'First' }, org.key, keyed(key))).status).toBe(201)
    const other = uniqueGtin()
    const res = await post(PRODUCTS, { gtin: other, product_name: 'Second' }, org.key, keyed(key))
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe('Idempotency-Key')
    expect((await products(other))[0]!.n).toBe(0)
    // another path with the key, too
    const retailer = await post('/retailers/api/v1/retailers', { name: 'Reused' }, org.key, keyed(key))
    expectProblem(retailer, 422, 'validation_error')
    const retailers = await sql<{ n: number }>(
      `select count(*)::int n from retailers where name = 'Reused' and organization_id = $1`,
      [parseId(org.id)],
    )
    expect(retailers[0]!.n).toBe(0)
  })

  test('another API key of the organization never gets the stored response', async () => {
    const org = await createOrganization()
    const key = newKey()
    const created = await post(`${ORGS}/${org.id}/api-keys`, { name: 'ci', role: 'editor' }, org.key, keyed(key))
    expect(created.status).toBe(200)
    const other = await createKey(org, 'manager')
    const res = await post(`${ORGS}/${org.id}/api-keys`, { name: 'ci', role: 'editor' }, other, keyed(key))
    expectProblem(res, 422, 'validation_error')
    expect(res.text).not.toContain(created.json.key)
  })

  test('concurrent requests with one key: one does the work, the other is 409', async () => {
    const org = await createOrganization()
    const key = newKey()
    const gtin = uniqueGtin()
    const body = { gtin, product_name: 'Racing oats' }
    // the first request holds the key while its body trickles in; the second arrives meanwhile
    const text = JSON.stringify(body)
    let release!: () => void
    const held = new Promise<void>((done) => {
      release = done
    })
    const slow = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, 10)))
        await held
        controller.enqueue(new TextEncoder().encode(text.slice(10)))
        controller.close()
      },
    })
    const { baseUrl } = await import('../../support/server')
    const first = fetch(`${baseUrl}${PRODUCTS}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(text.length),
        'x-api-key': org.key,
        ...keyed(key),
      },
      body: slow,
      // @ts-expect-error: Bun streams a request body with half duplex
      duplex: 'half',
    })
    // the key is claimed once its row exists
    await eventually(
      async () => (await sql('select 1 from idempotency_keys where key = $1', [key])).length > 0,
      20_000,
      'the first request to claim the key',
    )
    const second = await post(PRODUCTS, body, org.key, keyed(key))
    expectProblem(second, 409, 'conflict')
    release()
    const done = await first
    expect(done.status).toBe(201)
    expect((await products(gtin))[0]!.n).toBe(1)
    const replay = await post(PRODUCTS, body, org.key, keyed(key))
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
  })

  test('a refused request does not keep the key: the corrected one may use it', async () => {
    const org = await createOrganization()
    const key = newKey()
    const gtin = uniqueGtin()
    expectProblem(await post(PRODUCTS, { gtin, product_name: 7 }, org.key, keyed(key)), 422, 'validation_error')
    expect(await sql('select 1 from idempotency_keys where key = $1', [key])).toEqual([])
    const fixed = await post(PRODUCTS, { gtin, product_name: 'Fixed' }, org.key, keyed(key))
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
  })

  test('admin token requests have their own scope; a malformed key is 422; uploads are matched by their bytes', async () => {
    const key = newKey()
    const body = { name: 'Idem Org', owner_email: `o${Date.now()}@idem.test` }
    const first = await post(ORGS, body, undefined, { ...ADMIN, ...keyed(key) })
    expect(first.status).toBe(201)
    const again = await post(ORGS, body, undefined, { ...ADMIN, ...keyed(key) })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json.organization.id).toBe(first.json.organization.id)
    expect(
      (await sql<{ n: number }>('select count(*)::int n from organizations where name = $1', ['Idem Org']))[0]!.n,
    ).toBeGreaterThanOrEqual(1)
    expect((await sql<{ scope: string }>('select scope from idempotency_keys where key = $1', [key]))[0]!.scope).toBe(
      'admin',
    )
    const bad = await post(ORGS, body, undefined, { ...ADMIN, 'idempotency-key': 'has space' })
    expectProblem(bad, 422, 'validation_error')

    // a feed upload (streamed): the same bytes replay the run, other bytes are 422
    const org = await createOrganization()
    const upload = (text: string) =>
      call('POST', '/feeds/api/v1/runs?source=off&file_name=idem.jsonl', {
        raw: text,
        key: org.key,
        headers: { 'content-type': 'application/x-ndjson', ...keyed(`up-${key}`) },
      })
    const line = `${JSON.stringify({ code: uniqueGtin(), product_name: 'Streamed' })}\n`
    const run = await upload(line)
    expect(run.status).toBe(202)
    const rerun = await upload(line)
    expect(rerun.status).toBe(202)
    expect(rerun.headers.get('idempotent-replayed')).toBe('true')
    expect(rerun.json.id).toBe(run.json.id)
    expectProblem(await upload(line.replace('Streamed', 'Strimmed')), 422, 'validation_error')
    const runs = await sql<{ n: number }>(
      `select count(*)::int n from feed_runs where file = 'idem.jsonl' and organization_id = $1`,
      [parseId(org.id)],
    )
    expect(runs[0]!.n).toBe(1)
  })
})
