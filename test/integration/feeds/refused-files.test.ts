import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { parseId } from '../../../src/shared/ids'
import { ADMIN, createOrganization, eventually, PRODUCTS, RETAILERS, sql, uniqueGtin } from '../../support/fixtures'
import { baseUrl, get, post } from '../../support/server'

// Issue 45, "refuse what is not a feed": bytes that are not text of the declared format, or a
// header with none of the source's identifying columns, are 422 at upload when the head shows it,
// else the run fails naming what was expected and what was found. Before, such files "succeeded"
// with 0 rows read or with every row rejected. The catalog is unchanged either way.

const RUNS = '/feeds/api/v1/runs'

/** Uploads raw bytes (the admin token's unless a key is given). */
async function send(query: string, body: Uint8Array | string, type: string, key?: string) {
  const auth = key ? { 'x-api-key': key } : ADMIN
  const res = await fetch(`${baseUrl}${RUNS}?${query}`, {
    method: 'POST',
    headers: { 'content-type': type, ...auth },
    body: typeof body === 'string' ? body : new Blob([Buffer.from(body)]),
  })
  return { status: res.status, json: (await res.json()) as any }
}

const runCount = async () => Number((await sql<{ n: number }>('select count(*)::int as n from feed_runs'))[0]!.n)
const productsOf = (gtins: string[]) =>
  sql('select gtin from products where gtin = any($1::text[]) or gtin = any($2::text[])', [
    gtins,
    gtins.map((g) => g.padStart(14, '0')),
  ])

/** Binary bytes that carry a GTIN, so a reader that took them as text could write it. */
function binaryWith(gtin: string) {
  const bytes = Buffer.alloc(4096)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37 + 11) % 256
  Buffer.from(`code\tproduct_name\n${gtin}\tBinary\n`).copy(bytes, 100)
  return bytes
}

describe('refused at upload (422, nothing stored)', () => {
  test('binary bytes uploaded as an Open Food Facts feed', async () => {
    const gtin = uniqueGtin()
    const before = await runCount()
    const res = await send('source=off&file_name=image.bin', binaryWith(gtin), 'application/octet-stream')
    expect(res.status).toBe(422)
    expect(res.json.code).toBe('validation_error')
    expect(res.json.detail).toContain('binary bytes')
    expect(res.json.detail).toContain('Open Food Facts')
    expect(await runCount()).toBe(before)
    expect(await productsOf([gtin])).toEqual([])
  })

  test('bytes that are not UTF-8, gzip-compressed', async () => {
    const text = Buffer.concat([Buffer.from('code\tproduct_name\n'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0x0a])])
    const before = await runCount()
    const res = await send('source=off', gzipSync(text), 'application/gzip')
    expect(res.status).toBe(422)
    expect(res.json.detail).toContain('not UTF-8')
    expect(await runCount()).toBe(before)
  })

  test('an Open Food Facts CSV export without a code column', async () => {
    const gtin = uniqueGtin()
    const before = await runCount()
    const csv = `barcode\tproduct_name\tbrands\n${gtin}\tOats\tAcme\n`
    const res = await send('source=off&file_name=export.csv', csv, 'text/tab-separated-values')
    expect(res.status).toBe(422)
    expect(res.json.detail).toContain('expected a header with "code"')
    expect(res.json.detail).toContain('barcode, product_name, brands')
    expect(await runCount()).toBe(before)
    expect(await productsOf([gtin])).toEqual([])
  })

  test('a merchant CSV with neither gtin nor id', async () => {
    const org = await createOrganization()
    const retailer = (await post(RETAILERS, { name: `Refused Market ${uniqueGtin()}` }, org.key)).json.id as string
    const gtin = uniqueGtin()
    const csv = `sku,name,ean,cost\nA1,Drink,${gtin},1.99 USD\n`
    const res = await send(`source=affiliate&retailer_id=${retailer}`, csv, 'text/csv', org.key)
    expect(res.status).toBe(422)
    expect(res.json.detail).toContain('expected a header with "gtin" or "id"')
    expect(res.json.detail).toContain('sku, name, ean, cost')
    expect(await sql('select id from feed_runs where organization_id = $1', [parseId(org.id)])).toEqual([])
    expect(await sql('select 1 from offers where retailer_id = $1', [parseId(retailer)])).toEqual([])
    expect(await productsOf([gtin])).toEqual([])
  })

  test('a gzip whose header does not open is 422, never 500', async () => {
    const before = await runCount()
    const res = await send('source=off', Buffer.from([0x1f, 0x8b, 0x08, 0xff, 0, 0, 1, 2, 3]), 'application/gzip')
    expect(res.status).toBe(422)
    expect(res.json.detail).toContain('gzip')
    expect(await runCount()).toBe(before)
  })
})

/** Waits for a run to end and returns it. */
const ended = (id: string) =>
  eventually(async () => {
    const run = await fetch(`${baseUrl}${RUNS}/${id}`, { headers: ADMIN }).then((r) => r.json() as Promise<any>)
    return run.status === 'succeeded' || run.status === 'failed' ? run : null
  }, 30_000)

describe('refused at the start of the run (a named format: the head is judged by the run)', () => {
  test('binary bytes named off_csv: the run fails, nothing read', async () => {
    const gtin = uniqueGtin()
    const res = await send('source=off&format=off_csv', binaryWith(gtin), 'application/octet-stream')
    expect(res.status).toBe(202)
    const run = await ended(res.json.id)
    expect(run).toMatchObject({ status: 'failed', counts: { read: 0, created: 0, updated: 0, rejected: 0 } })
    expect(run.error).toContain('binary bytes')
    expect(run.error).toContain('expected text')
    expect(await productsOf([gtin])).toEqual([])
    expect(await sql('select 1 from feed_run_chunks where run_id = $1', [parseId(run.id)])).toEqual([])
  })

  test('a JSONL named off_jsonl whose first line is not a JSON object', async () => {
    const gtin = uniqueGtin()
    const body = `["code","product_name"]\n${JSON.stringify({ code: gtin, product_name: 'Oats' })}\n`
    const res = await send('source=off&format=off_jsonl', body, 'application/x-ndjson')
    expect(res.status).toBe(202)
    const run = await ended(res.json.id)
    expect(run.status).toBe('failed')
    expect(run.error).toContain('expected a JSON object on each line, found a first line that is an array')
    expect(run.counts.read).toBe(0)
    expect(await productsOf([gtin])).toEqual([])
    expect((await get(`${PRODUCTS}/${gtin}`, (await createOrganization()).key)).status).toBe(404)
  })

  test('a real feed still succeeds', async () => {
    const gtin = uniqueGtin()
    const res = await send(
      'source=off',
      `${JSON.stringify({ code: gtin, product_name: 'Rolled oats' })}\n`,
      'application/x-ndjson',
    )
    expect(res.status).toBe(202)
    expect(await ended(res.json.id)).toMatchObject({ status: 'succeeded', counts: { read: 1, created: 1 } })
  })
})
