import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import pg from 'pg'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { eventually } from '../support/eventually'
import { ADMIN } from '../support/fixtures'
import { ownDatabase } from '../support/own-database'
import { startServer } from '../support/process'

// A worker killed (SIGKILL) in the middle of an import: a new process finishes the run, and the
// catalog ends exactly as after an uninterrupted import of the same file on another database.
const ROWS = 3000
const feedDir = mkdtempSync(join(tmpdir(), 'feeds-resume-'))
const killedDb = ownDatabase('feeds_killed')
const wholeDb = ownDatabase('feeds_whole')
const servers: Awaited<ReturnType<typeof startServer>>[] = []

beforeAll(async () => {
  const lines: string[] = []
  for (let i = 0; i < ROWS; i++) {
    const body = `761${String(i).padStart(9, '0')}`
    lines.push(
      JSON.stringify({
        code: `${body}${gs1CheckDigit(body)}`,
        product_name: `Resume Product ${i}`,
        brands: `Brand ${i % 37}`,
        quantity: `${100 + (i % 50)} g`,
        ingredients_text: i % 3 ? 'water, sugar, milk' : 'wheat flour, salt',
        last_modified_t: 1_700_000_000 + i,
      }),
    )
  }
  writeFileSync(join(feedDir, 'synthetic.jsonl.gz'), gzipSync(lines.join('\n')))
  for (const d of [killedDb, wholeDb]) await d.create()
})

afterAll(async () => {
  for (const s of servers) {
    s.kill('SIGKILL')
    await s.exited
  }
  for (const d of [killedDb, wholeDb]) await d.drop()
  rmSync(feedDir, { recursive: true, force: true })
})

async function serve(database: ReturnType<typeof ownDatabase>) {
  const server = await startServer({
    DATABASE_URL: database.url,
    FEED_DIR: feedDir,
    FEED_CHUNK_ROWS: '100',
    FEED_CHUNK_CONCURRENCY: '1',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'warn',
  })
  servers.push(server)
  return server
}

// the platform's import (admin token): its values carry the source's weight and are promoted
async function startRun(api: string) {
  const res = await fetch(`${api}/feeds/api/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ source: 'off', path: 'synthetic.jsonl.gz', full: true }),
  })
  expect(res.status).toBe(202)
  return ((await res.json()) as any).id as string
}

const waitFor = (api: string, runId: string, done: (run: any) => boolean) =>
  eventually(async () => {
    const run: any = await (await fetch(`${api}/feeds/api/v1/runs/${runId}`, { headers: ADMIN })).json()
    return done(run) ? run : null
  }, 120_000)

/** Everything an import writes to the catalog, without ids and times. */
async function catalogState(database: ReturnType<typeof ownDatabase>) {
  const db = new pg.Client({ connectionString: database.url })
  await db.connect()
  try {
    const products = await db.query(
      `select p.gtin, p.product_name, b.name as brand_name, p.net_content, p.net_content_value, p.net_content_uom,
              p.ingredients_text, p.contains_allergens, p.field_confidence, p.data_source
         from products p left join brands b on b.id = p.brand_id order by p.gtin`,
    )
    const candidates = await db.query(
      `select p.gtin, c.field, c.value, c.source from product_candidate_values c join products p on p.id = c.product_id
       order by p.gtin, c.field`,
    )
    const records = await db.query('select key, gtin, content_hash, reading from feed_records order by key')
    const events = await db.query('select event_type, count(*)::int n from events group by 1 order by 1')
    return { products: products.rows, candidates: candidates.rows, records: records.rows, events: events.rows }
  } finally {
    await db.end()
  }
}

test('a killed worker: the run resumes in a new process and ends in the uninterrupted state', async () => {
  // uninterrupted, elsewhere: started first, it runs while the other waits out its killed worker
  const whole = await serve(wholeDb)
  const wholeRun = await startRun(whole.url)

  // killed mid-run
  let server = await serve(killedDb)
  const runId = await startRun(server.url)
  const partway = await waitFor(server.url, runId, (r) => r.progress.chunks_done >= 3)
  expect(partway.status).toBe('running')
  server.kill('SIGKILL')
  await server.exited
  server = await serve(killedDb)
  const resumed = await waitFor(server.url, runId, (r) => r.status !== 'running' && r.status !== 'queued')
  expect(resumed).toMatchObject({
    status: 'succeeded',
    counts: { read: ROWS, created: ROWS, updated: 0, unchanged: 0, rejected: 0 },
    progress: { chunks_total: ROWS / 100, chunks_done: ROWS / 100, percent: 100 },
  })

  expect(await waitFor(whole.url, wholeRun, (r) => r.status === 'succeeded')).toMatchObject({
    counts: resumed.counts,
  })

  const [killed, uninterrupted] = [await catalogState(killedDb), await catalogState(wholeDb)]
  expect(killed.products).toHaveLength(ROWS)
  expect(killed.candidates).toHaveLength(ROWS * 6) // name, brand, net content ×3, ingredients: each once
  expect(killed.products[0]).toMatchObject({ product_name: 'Resume Product 0', brand_name: 'Brand 0' })
  expect(killed).toEqual(uninterrupted)
}, 240_000)
