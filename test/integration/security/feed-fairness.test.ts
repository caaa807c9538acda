import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  eventually,
  expectProblem,
  RETAILERS,
  sql,
  type TestOrg,
} from '../../support/fixtures'
import { ownService } from '../../support/own-service'
import { baseUrl, post } from '../../support/server'

// Issue 44, "fair shares of shared workers", for the feed pipeline (review findings B-1 and B-4):
// one organization cannot fill the feed queues (a quota of runs, refused before the body is read)
// nor hold every import or chunk worker, so another organization's small run finishes while the
// flood is still being written; a run the service would refuse is refused before its upload is read.

const RUNS = '/feeds/api/v1/runs'
const MiB = 1024 * 1024

/** A GTIN-13 with its check digit from a 12-digit body. */
function gtin13(body: string) {
  let sum = 0
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += Number(body[i]) * w
  return body + ((10 - (sum % 10)) % 10)
}

/** An Open Food Facts JSONL file of `rows` products, GTINs from `prefix` (3 digits) on. */
const offFile = (prefix: string, rows: number) =>
  Array.from({ length: rows }, (_, i) =>
    JSON.stringify({
      code: gtin13(`${prefix}${String(i).padStart(9, '0')}`),
      product_name: `P ${prefix} ${i}`,
      lc: 'en',
    }),
  ).join('\n')

type Reply = { status: number; headers: Headers; json: any }

async function send(base: string, key: string, path: string, body: BodyInit, type: string): Promise<Reply> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': type, 'x-api-key': key }, body })
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null }
}

/**
 * A body of `chunks` 1 MiB chunks made as they are pulled: `pulled()` tells how many the client
 * handed over. A route that refuses before reading leaves most of them unmade.
 */
function lazyBody(chunks: number, first: Uint8Array) {
  let made = 0
  const filler = new Uint8Array(MiB).fill(0x0a)
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (made === chunks) return controller.close()
      controller.enqueue(made++ === 0 ? first : filler)
    },
  })
  return { stream, pulled: () => made }
}

describe('feed workers are shared fairly per organization (a service with FEED_CHUNK_ROWS=10)', () => {
  const feedDir = mkdtempSync(join(tmpdir(), 'fairness-feeds-'))
  // the defaults otherwise: 2 chunk slots per process, 4 runs per organization
  const service = ownService('fairness', { FEED_CHUNK_ROWS: '10', FEED_DIR: feedDir })
  let flooder: { id: string; key: string }
  let other: { id: string; key: string }
  const flood: string[] = []

  const organization = async (name: string) => {
    const { json } = await service.call('POST', '/account/api/v1/organizations', undefined, {
      name,
      owner_email: `owner-${name.replaceAll(' ', '')}@fairness.test`,
    })
    return { id: json.organization.id as string, key: json.api_key.key as string }
  }
  const runOf = async (id: string, key: string) =>
    (await (await fetch(`${service.url}${RUNS}/${id}`, { headers: { 'x-api-key': key } })).json()) as any
  const stored = async (orgId: string) =>
    (
      await service.query(
        `select (select count(*)::int from feed_runs where organization_id = $1) runs,
                (select count(*)::int from feed_uploads u join feed_runs r on r.id = u.run_id where r.organization_id = $1) parts`,
        [parseId(orgId)],
      )
    )[0]

  beforeAll(async () => {
    writeFileSync(join(feedDir, 'one.jsonl'), offFile('208', 1))
    await service.start()
    flooder = await organization('Flooding Org')
    other = await organization('Other Org')
  }, 60_000)

  afterAll(async () => {
    await service.stop()
    rmSync(feedDir, { recursive: true, force: true })
  })

  test('an organization has at most 4 runs queued or running: the 5th is 429 before its body is read', async () => {
    // four runs of 2,500 rows: 1,000 chunk jobs of 10 rows, minutes of work for the chunk workers
    for (let i = 0; i < 4; i++) {
      const res = await send(
        service.url,
        flooder.key,
        `${RUNS}?source=off&file_name=flood-${i}.jsonl`,
        offFile(`20${i}`, 2500),
        'application/x-ndjson',
      )
      expect(res.status).toBe(202)
      flood.push(res.json.id)
    }
    const before = await stored(flooder.id)
    // a 64 MiB body made as it is sent: refused from the count of runs, not after the bytes
    const body = lazyBody(64, new TextEncoder().encode(`${offFile('209', 1)}\n`))
    const fifth = await send(service.url, flooder.key, `${RUNS}?source=off`, body.stream, 'application/x-ndjson')
    expectProblem(fifth, 429, 'rate_limited')
    expect(fifth.json.detail).toContain('FEED_RUNS_PER_ORGANIZATION')
    expect(fifth.headers.get('retry-after')).toBe('30')
    expect(fifth.headers.get('ratelimit-limit')).toBe('4')
    expect(fifth.headers.get('ratelimit-remaining')).toBe('0')
    expect(Number(fifth.headers.get('ratelimit-reset'))).toBeGreaterThan(0)
    expect(body.pulled()).toBeLessThan(64)
    // a server path run counts against the same quota
    const path = JSON.stringify({ source: 'off', path: 'one.jsonl' })
    expectProblem(await send(service.url, flooder.key, RUNS, path, 'application/json'), 429, 'rate_limited')
    expect(await stored(flooder.id)).toEqual(before)
    // the platform's runs are not counted against any organization's quota
    const platform = await fetch(`${service.url}${RUNS}?source=off&file_name=platform.jsonl`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', ...ADMIN },
      body: offFile('300', 5),
    })
    expect(platform.status).toBe(202)
  }, 60_000)

  test("another organization's small run finishes while the flood still has chunks to write", async () => {
    expect(flood).toHaveLength(4)
    // the flood is read and queued: its chunk jobs are ahead of anything sent from now on
    await eventually(async () => {
      const runs = await Promise.all(flood.map((id) => runOf(id, flooder.key)))
      return runs.some((r) => r.progress.chunks_total !== null) ? true : null
    }, 30_000)
    const small = await send(
      service.url,
      other.key,
      `${RUNS}?source=off&file_name=small.jsonl`,
      offFile('400', 30),
      'application/x-ndjson',
    )
    expect(small.status).toBe(202)
    // a generous bound: the order below is what is asserted
    const done = await eventually(async () => {
      const run = await runOf(small.json.id, other.key)
      return run.status === 'succeeded' || run.status === 'failed' ? run : null
    }, 60_000)
    expect(done.status).toBe('succeeded')
    expect(done.counts).toMatchObject({ read: 30, created: 30 })
    // when it finished, the flood still had chunks left to write
    const rows = await service.query<{ left: number }>(
      `select count(*)::int "left" from feed_run_chunks c join feed_runs r on r.id = c.run_id
        where r.organization_id = $1 and c.status <> 'done'`,
      [parseId(flooder.id)],
    )
    expect(rows[0]!.left).toBeGreaterThan(0)
    const floodRuns = await Promise.all(flood.map((id) => runOf(id, flooder.key)))
    expect(floodRuns.some((r) => r.status === 'queued' || r.status === 'running')).toBe(true)
  }, 120_000)
})

describe('a feed upload the service would refuse is refused before its body is read', () => {
  let org: TestOrg
  let foreignRetailer: string
  beforeAll(async () => {
    org = await createOrganization()
    const owner = await createOrganization()
    const res = await post(RETAILERS, { name: 'Not yours' }, owner.key)
    expect(res.status).toBe(201)
    foreignRetailer = res.json.id
  })
  const storedRuns = async () =>
    (
      await sql<{ runs: number; parts: number }>(
        `select count(*)::int runs, (select count(*)::int from feed_uploads u join feed_runs r on r.id = u.run_id
           where r.organization_id = $1) parts from feed_runs where organization_id = $1`,
        [parseId(org.id)],
      )
    )[0]!
  const header = new TextEncoder().encode('id\ttitle\tgtin\tprice\tlink\tavailability\n')

  test("another organization's retailer_id: 404, the body not read, nothing stored", async () => {
    const before = await storedRuns()
    const body = lazyBody(64, header)
    const res = await send(
      baseUrl,
      org.key,
      `${RUNS}?source=affiliate&retailer_id=${foreignRetailer}`,
      body.stream,
      'text/csv',
    )
    expectProblem(res, 404, 'not_found')
    expect(body.pulled()).toBeLessThan(64)
    expect(await storedRuns()).toEqual(before)
  }, 60_000)

  test('contradicting query options: 422 naming the field, the body not read, nothing stored', async () => {
    const before = await storedRuns()
    for (const [query, field] of [
      ['source=affiliate', 'retailer_id'],
      [`source=off&retailer_id=${foreignRetailer}`, 'retailer_id'],
      ['source=off&format=merchant_csv', 'format'],
      ['source=usda&format=usda_csv', 'format'],
    ] as const) {
      const body = lazyBody(64, header)
      const res = await send(baseUrl, org.key, `${RUNS}?${query}`, body.stream, 'text/csv')
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe(field)
      expect(body.pulled()).toBeLessThan(64)
    }
    expect(await storedRuns()).toEqual(before)
  }, 60_000)

  test('a USDA CSV upload is refused once its first bytes are in, not after the rest', async () => {
    const before = await storedRuns()
    const body = lazyBody(64, new TextEncoder().encode(`fdc_id,brand_owner,gtin_upc\n${'1,a,b\n'.repeat(20_000)}`))
    const res = await send(baseUrl, org.key, `${RUNS}?source=usda`, body.stream, 'text/csv')
    expectProblem(res, 422, 'validation_error')
    expect(res.json.detail).toContain('server path')
    expect(body.pulled()).toBeLessThan(64)
    expect(await storedRuns()).toEqual(before)
  }, 60_000)
})
