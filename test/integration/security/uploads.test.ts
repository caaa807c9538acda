import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { parseId } from '../../../src/shared/ids'
import {
  createOrganization,
  eventually,
  expectProblem,
  sql,
  type TestOrg,
  tableCounts,
  uniqueGtin,
} from '../../support/fixtures'
import { ownService } from '../../support/own-service'
import { baseUrl, get, post } from '../../support/server'

// Issue 44, finding 1 and the feed-path oracle of finding 5: uploads are streamed by their route
// (never parsed or walked by the framework), bounded in bytes, decompression, line length and
// columns; a server path gets one answer whatever the file system holds.

const RUNS = '/feeds/api/v1/runs'
const IMPORTS = '/advertising/api/v1/performance/imports'
const MiB = 1024 * 1024

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

/** POSTs `body` as `type` with the org's key; a ReadableStream body is sent chunked (no Content-Length). */
async function upload(
  path: string,
  body: BodyInit,
  type: string,
  opts: { key?: string; base?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch((opts.base ?? baseUrl) + path, {
    method: 'POST',
    headers: { 'content-type': type, 'x-api-key': opts.key ?? org.key, ...opts.headers },
    body,
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null }
}

/** A body of `chunks` 1 MiB chunks made by `make`, streamed; `sent` resolves once the last is handed over. */
function streamed(chunks: number, make: (i: number) => Uint8Array) {
  let i = 0
  let done: () => void
  const sent = new Promise<void>((resolve) => {
    done = resolve
  })
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i === chunks) {
        controller.close()
        done()
        return
      }
      controller.enqueue(make(i++))
    },
  })
  return { stream, sent }
}

async function finishedRun(id: string, key = org.key, base = baseUrl) {
  return eventually(async () => {
    const res = await fetch(`${base}${RUNS}/${id}`, { headers: { 'x-api-key': key } })
    const run = (await res.json()) as { status: string }
    return run.status === 'succeeded' || run.status === 'failed' ? (run as any) : null
  }, 60_000)
}

const storedRuns = async (orgId: string) =>
  (
    await sql<{ runs: number; parts: number }>(
      `select count(*)::int runs, (select count(*)::int from feed_uploads u join feed_runs r on r.id = u.run_id
         where r.organization_id = $1) parts from feed_runs where organization_id = $1`,
      [parseId(orgId)],
    )
  )[0]!

const offLine = (gtin: string, name: string) => JSON.stringify({ code: gtin, product_name: name, lc: 'en' })

describe('uploads are streamed by their route, not parsed by the framework', () => {
  test('a 19 MiB x-ndjson upload is answered 202 and /healthz answers right after it is sent', async () => {
    // one product line, then 19 MiB of one over-long line: stored as it streams, read by the job
    const first = new TextEncoder().encode(`${offLine('4006381333900', 'Streamed upload')}\n`)
    const filler = new Uint8Array(MiB).fill(0x61)
    const body = streamed(19, (i) => (i === 0 ? first : filler))
    const answer = upload(`${RUNS}?source=off&file_name=big.jsonl`, body.stream, 'application/x-ndjson')
    await body.sent
    // the process is not walking the body: it answers a health check meanwhile
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200)
    const res = await answer
    expect(res.status).toBe(202)
    expect(res.json.status).toBe('queued')
    const run = await finishedRun(res.json.id)
    expect(run.status).toBe('succeeded')
    expect(run.counts).toMatchObject({ read: 2, created: 1, rejected: 1 })
    expect(run.rejected_sample[0].line).toBe(2)
    // the stored upload is removed once the run has read it
    expect((await storedRuns(org.id)).parts).toBe(0)
  }, 90_000)

  test('one organization sends at most two uploads at once (429 for a third, barcode CSVs too); others are not held up', async () => {
    const sender = await createOrganization()
    const uploads = join(process.env.DATA_DIR!, 'uploads')
    const receiving = () => (existsSync(uploads) ? readdirSync(uploads).filter((f) => f.endsWith('.upload')).length : 0)
    // two uploads that have started and wait for the rest of their bytes
    const open = [0, 1].map(() => {
      let push: ReadableStreamDefaultController<Uint8Array>
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          push = controller
          controller.enqueue(new TextEncoder().encode(`${offLine('4006381333993', 'Slow upload')}\n`))
        },
      })
      return {
        answer: upload(`${RUNS}?source=off`, stream, 'application/x-ndjson', { key: sender.key }),
        end: () => push.close(),
      }
    })
    await eventually(async () => (receiving() >= 2 ? true : null))
    const before = await storedRuns(sender.id)
    const third = await upload(`${RUNS}?source=off`, `${offLine('4006381333993', 'Third')}\n`, 'application/x-ndjson', {
      key: sender.key,
    })
    expectProblem(third, 429, 'rate_limited')
    expect(third.headers.get('retry-after')).toBe('10')
    // contract §3: a 429 carries the RateLimit-* headers too
    expect(third.headers.get('ratelimit-limit')).toBe('2')
    expect(third.headers.get('ratelimit-remaining')).toBe('0')
    expect(third.headers.get('ratelimit-reset')).toBe('10')
    expect(await storedRuns(sender.id)).toEqual(before)
    // a barcode CSV is an upload like the others: it waits for a slot of its organization
    const batches = () =>
      sql<{ n: number }>('select count(*)::int n from barcode_batches where organization_id = $1', [parseId(sender.id)])
    const batchesBefore = await batches()
    const csv = await upload('/products/api/v1/barcode/batch/?output=zip', 'gtin\n4006381333931\n', 'text/csv', {
      key: sender.key,
    })
    expectProblem(csv, 429, 'rate_limited')
    expect(csv.headers.get('ratelimit-limit')).toBe('2')
    expect(await batches()).toEqual(batchesBefore)
    // another organization's upload goes through meanwhile
    const other = await upload(`${RUNS}?source=off`, `${offLine('4006381333993', 'Other')}\n`, 'application/x-ndjson')
    expect(other.status).toBe(202)
    for (const o of open) o.end()
    for (const o of open) expect((await o.answer).status).toBe(202)
  }, 60_000)

  test('JSON bodies to an upload route keep the 1 MiB limit', async () => {
    const before = await storedRuns(org.id)
    const big = JSON.stringify({ source: 'off', path: 'x'.repeat(2 * MiB) })
    const res = await post(RUNS, JSON.parse(big), org.key)
    expectProblem(res, 413, 'payload_too_large')
    expect(await storedRuns(org.id)).toEqual(before)
  })
})

describe('limits are settings (a service with FEED_UPLOAD_MAX_MB=40, FEED_DECOMPRESSED_MAX_MB=1)', () => {
  // a service process (api and workers) on a database of its own, so its jobs run with its settings
  const service = ownService('uploads', { FEED_UPLOAD_MAX_MB: '40', FEED_DECOMPRESSED_MAX_MB: '1' })
  let own: { id: string; key: string }
  beforeAll(async () => {
    await service.start()
    const { json } = await service.call('POST', '/account/api/v1/organizations', undefined, {
      name: 'Uploads Org',
      owner_email: 'owner@uploads.test',
    })
    own = { id: json.organization.id, key: json.api_key.key }
  }, 60_000)
  afterAll(() => service.stop())
  const stored = async () =>
    (
      await service.query<{ runs: number; parts: number; products: number }>(
        'select (select count(*)::int from feed_runs) runs, (select count(*)::int from feed_uploads) parts, (select count(*)::int from products) products',
      )
    )[0]!
  const send = (path: string, body: BodyInit, type: string) =>
    upload(path, body, type, { base: service.url, key: own.key })

  test('past the upload limit: 413 problem+json, by declared length or while streaming, and nothing is stored', async () => {
    const before = await stored()
    const declared = await send(`${RUNS}?source=off`, new Uint8Array(41 * MiB).fill(0x0a), 'application/x-ndjson')
    expectProblem(declared, 413, 'payload_too_large')
    expect(declared.json.detail).toContain('FEED_UPLOAD_MAX_MB')
    const body = streamed(42, () => new Uint8Array(MiB).fill(0x0a))
    expectProblem(await send(`${RUNS}?source=off`, body.stream, 'application/gzip'), 413, 'payload_too_large')
    expect(await stored()).toEqual(before)
  }, 60_000)

  test("under it, a file larger than other uploads' 20 MiB and the server's former 32 MiB body cap is taken", async () => {
    const body = streamed(36, (i) =>
      new TextEncoder().encode(i === 0 ? `${offLine('4006381333917', 'Big upload')}\n` : '\n'.repeat(MiB)),
    )
    const res = await send(`${RUNS}?source=off&file_name=36mib.jsonl`, body.stream, 'application/x-ndjson')
    expect(res.status).toBe(202)
    const run = await finishedRun(res.json.id, own.key, service.url)
    expect(run.status).toBe('succeeded')
    expect(run.counts).toMatchObject({ read: 1, created: 1 })
    expect((await stored()).parts).toBe(0)
  }, 60_000)

  test('a gzip upload that decompresses past FEED_DECOMPRESSED_MAX_MB fails its run with that reason', async () => {
    // ordinary rows (well under 100:1), 2 MiB of them once decompressed
    const rows = Array.from({ length: 80_000 }, (_, i) => JSON.stringify({ code: `x${i}`, n: i * 7919 })).join('\n')
    const file = gzipSync(rows)
    expect(rows.length).toBeGreaterThan(2 * MiB)
    expect(rows.length / file.length).toBeLessThan(100)
    const before = await stored()
    const res = await send(`${RUNS}?source=off&file_name=rows.jsonl.gz`, file, 'application/gzip')
    expect(res.status).toBe(202)
    const run = await finishedRun(res.json.id, own.key, service.url)
    expect(run.status).toBe('failed')
    expect(run.error).toContain('FEED_DECOMPRESSED_MAX_MB')
    expect(run.counts.created).toBe(0)
    expect((await stored()).products).toBe(before.products)
    expect((await stored()).parts).toBe(0)
  }, 60_000)
})

describe('the jobs that read uploads bound what they read', () => {
  test('a gzip bomb fails the run with a reason naming the limit; the catalog is unchanged', async () => {
    const bomb = gzipSync(new Uint8Array(64 * MiB).fill(0x0a), { level: 9 })
    expect(bomb.length).toBeLessThan(MiB / 4)
    const before = await tableCounts()
    const res = await upload(`${RUNS}?source=off&file_name=bomb.jsonl.gz`, bomb, 'application/gzip')
    expect(res.status).toBe(202)
    const run = await finishedRun(res.json.id)
    expect(run.status).toBe('failed')
    expect(run.error).toContain('100:1')
    expect(run.error).toContain('decompression bomb')
    expect(run.counts).toMatchObject({ read: 0, created: 0, updated: 0 })
    // the catalog is unchanged; the one event is the run's own end, to the organization that started it
    expect(await tableCounts()).toEqual({ ...before, events: (before.events ?? 0) + 1 })
    const [ended] = await sql<{ event_type: string }>('select event_type from events where subject_id = $1', [
      parseId(run.id),
    ])
    expect(ended).toEqual({ event_type: 'feed_run.failed' })
    expect((await storedRuns(org.id)).parts).toBe(0)
  }, 60_000)

  test('a 2 MiB line is one rejected row naming its line; the rows around it are read', async () => {
    // GTINs of this test alone: other files create the well-known sample GTINs too
    const [longGtin, beforeGtin, afterGtin] = [uniqueGtin(), uniqueGtin(), uniqueGtin()]
    const long = `{"code":"${longGtin}","product_name":"${'x'.repeat(2 * MiB)}"}`
    const body = [offLine(beforeGtin, 'Before the long line'), long, offLine(afterGtin, 'After it')].join('\n')
    const res = await upload(`${RUNS}?source=off`, body, 'application/x-ndjson')
    expect(res.status).toBe(202)
    const run = await finishedRun(res.json.id)
    expect(run.status).toBe('succeeded')
    expect(run.counts).toMatchObject({ read: 3, created: 2, rejected: 1 })
    expect(run.rejected_sample).toHaveLength(1)
    expect(run.rejected_sample[0].line).toBe(2)
    expect(run.rejected_sample[0].reason).toContain('at most 1048576 bytes are read as one line')
    expect(run.rejected_sample[0].input.length).toBeLessThanOrEqual(200)
    const stored = await sql<{ gtin: string }>('select gtin from products where gtin = any($1) order by gtin', [
      [longGtin, beforeGtin, afterGtin].map((g) => g.padStart(14, '0')),
    ])
    expect(stored.map((p) => p.gtin)).toEqual([beforeGtin, afterGtin].map((g) => g.padStart(14, '0')).sort())
  }, 60_000)

  test('a NUL in a value is one rejected row, not a run failed by the database', async () => {
    const [nulGtin, okGtin] = [uniqueGtin(), uniqueGtin()]
    const body = ['code\tproduct_name', `${nulGtin}\tNul\u0000Bar`, `${okGtin}\tPlain`].join('\n')
    const res = await upload(`${RUNS}?source=off`, body, 'text/csv')
    expect(res.status).toBe(202)
    const run = await finishedRun(res.json.id)
    expect(run.status).toBe('succeeded')
    expect(run.error).toBeNull()
    expect(run.counts).toMatchObject({ read: 2, created: 1, rejected: 1 })
    expect(run.rejected_sample[0].line).toBe(2)
    expect(run.rejected_sample[0].reason).toContain('must not contain a NUL character')
    expect(run.rejected_sample[0].input).not.toContain('\u0000')
    const stored = await sql<{ gtin: string }>('select gtin from products where gtin = any($1) order by gtin', [
      [nulGtin, okGtin].map((g) => g.padStart(14, '0')),
    ])
    expect(stored.map((p) => p.gtin)).toEqual([okGtin.padStart(14, '0')])
  }, 60_000)

  test('a row of 100,000 columns is one rejected row; the rows around it are read', async () => {
    const [wideGtin, beforeGtin, afterGtin] = [uniqueGtin(), uniqueGtin(), uniqueGtin()]
    const wide = [wideGtin, 'Wide row', ...Array.from({ length: 100_000 }, (_, i) => `c${i}`)].join('\t')
    const body = ['code\tproduct_name', `${beforeGtin}\tNarrow before`, wide, `${afterGtin}\tNarrow after`].join('\n')
    const res = await upload(`${RUNS}?source=off`, body, 'text/tab-separated-values')
    expect(res.status).toBe(202)
    const run = await finishedRun(res.json.id)
    expect(run.status).toBe('succeeded')
    expect(run.format).toBe('off_csv')
    expect(run.counts).toMatchObject({ read: 3, created: 2, rejected: 1 })
    expect(run.rejected_sample[0]).toMatchObject({ line: 3 })
    expect(run.rejected_sample[0].reason).toContain('more than 1000 columns')
    const wideProduct = await sql('select id from products where gtin = $1', [wideGtin.padStart(14, '0')])
    expect(wideProduct).toEqual([])
  }, 60_000)

  test('performance imports: a long line is one refused row, a gzip bomb fails the import', async () => {
    const long = `{"campaign_id":"${'x'.repeat(2 * MiB)}"}`
    const lines = await upload(IMPORTS, `${long}\n{"campaign_id":"nope"}\n`, 'application/x-ndjson')
    expect(lines.status).toBe(202)
    const done = await eventually(async () => {
      const r = (await get(`${IMPORTS}/${lines.json.id}`, org.key)).json
      return r.status === 'succeeded' || r.status === 'failed' ? r : null
    })
    expect(done.status).toBe('succeeded')
    expect(done.errors.map((e: { row: number }) => e.row)).toEqual([1, 2])
    expect(done.errors[0].reason).toContain('at most 1048576 bytes')
    const bomb = gzipSync(new Uint8Array(64 * MiB).fill(0x0a), { level: 9 })
    const res = await upload(`${IMPORTS}?format=jsonl`, bomb, 'application/gzip')
    expect(res.status).toBe(202)
    const failed = await eventually(async () => {
      const r = (await get(`${IMPORTS}/${res.json.id}`, org.key)).json
      return r.status === 'succeeded' || r.status === 'failed' ? r : null
    })
    expect(failed.status).toBe('failed')
    expect(failed.error).toContain('decompression bomb')
    expect(
      await sql('select count(*)::int n from performance_uploads where import_id = $1', [parseId(res.json.id)]),
    ).toEqual([{ n: 0 }])
  }, 60_000)
})

describe('a feed server path', () => {
  const feedDir = join(process.env.DATA_DIR!, 'feeds')
  beforeAll(() => {
    mkdirSync(join(feedDir, 'a-folder'), { recursive: true })
    writeFileSync(join(feedDir, 'a-folder', 'inside.jsonl'), `${offLine('4006381333986', 'Inside')}\n`)
    symlinkSync('/etc/passwd', join(feedDir, 'link-out.jsonl'))
  })
  afterAll(() => {
    rmSync(join(feedDir, 'a-folder'), { recursive: true, force: true })
    rmSync(join(feedDir, 'link-out.jsonl'), { force: true })
  })

  test('outside the folder, missing, a folder or a symlink out of it: one and the same answer', async () => {
    const before = await storedRuns(org.id)
    const answers = []
    for (const path of [
      '/etc/shadow',
      '/root/.ssh/id_rsa',
      '/etc/passwd',
      '/nonexistent/file.jsonl',
      '../../../../etc/passwd',
      'missing.jsonl',
      'a-folder',
      'a-folder/../../feeds-elsewhere/x.jsonl',
      'link-out.jsonl',
    ]) {
      const res = await post(RUNS, { source: 'off', path }, org.key)
      expectProblem(res, 422, 'validation_error')
      const { request_id: _, ...answer } = res.json
      answers.push(answer)
    }
    for (const answer of answers) expect(answer).toEqual(answers[0])
    expect(JSON.stringify(answers[0])).not.toMatch(/shadow|id_rsa|passwd|missing|exist/)
    expect(await storedRuns(org.id)).toEqual(before)
    // a readable file inside the folder starts a run
    const ok = await post(RUNS, { source: 'off', path: 'a-folder/inside.jsonl' }, org.key)
    expect(ok.status).toBe(202)
    expect((await finishedRun(ok.json.id)).status).toBe('succeeded')
  }, 60_000)
})
