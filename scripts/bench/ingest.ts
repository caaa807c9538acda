// Feed ingestion benchmark (issue 45): a deterministic Open Food Facts style JSONL.gz of --rows
// products imported end to end by the service (chunk jobs: candidates, promotion, allergen and
// certification parsing, feed records), timed from the run's start to its success. In the same run:
// (b) the catalog floor: the same products INSERT … SELECT-ed into a table with the products'
//     columns, its primary key and unique GTIN only, plus one source-statement row each into a table
//     with its primary key and product index; the floor's rate is the rows divided by the two
//     statements' summed time (the least any import that stores these rows must spend);
// (c) the time from the import's end until every product is found by search (the search feature's
//     pending documents drained, then a sample of the products found by the search API);
// (d) the server process's peak RSS (Linux VmHWM).
// The service runs as configured (FEED_CHUNK_ROWS, FEED_CHUNK_CONCURRENCY: their defaults unless set).
//   npm run bench:ingest -- [--rows 1000000]
// Last line: `ingest: <N> rows/s end to end, <P>% of the catalog floor, searchable <S> s after, peak RSS <M> MB`
// Targets (issue 45): P >= 50, S <= 120 at 1M rows, M < 500.
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { createGunzip, createGzip } from 'node:zlib'
import { from as copyFrom } from 'pg-copy-streams'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { serverPid, watchImport } from './import-activity'
import { cpuSecondsOf, startBenchServer } from './server'
import { statementProfile } from './statements'

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } })
const ROWS = Number(values.rows)
const feedDir = mkdtempSync(join(tmpdir(), 'ingest-bench-'))
const file = join(feedDir, 'off.jsonl.gz')
const say = (line: string) => console.error(line)

// Deterministic products: names, brands, quantities and ingredient lists drawn by index.
const WORDS = ['organic', 'crunchy', 'dark', 'chocolate', 'oat', 'honey', 'peanut', 'butter', 'tomato', 'basil']
/**
 * The ingredient texts of the real Open Food Facts sample (test/fixtures/feeds/off: 39 labels in
 * French, English, German…, 13-1,073 characters, 234 on average): a label's comma-separated parts
 * rotated by the row's index, the first with a percentage of its own, so that rows sharing a text
 * are at least 39,000 apart (48 % of 300,000 rows' texts are distinct, 24 % of 1,000,000) while the
 * words are a real label's. Their vocabulary is the sample's (649 words): the analysis's per-word
 * memo is warm from the first rows, as it is on a real dump's common words, not on its rare ones.
 * Until the tenth session the rows had three short English texts (30 characters), a fraction of
 * what analysing real labels costs.
 */
const REAL_TEXTS = readFileSync(join(import.meta.dir, '../../test/fixtures/feeds/off/products.jsonl'), 'utf8')
  .split('\n')
  .flatMap((line) => {
    try {
      const text = (JSON.parse(line) as { ingredients_text?: unknown }).ingredients_text
      return typeof text === 'string' && text ? [text.split(/,\s*/)] : []
    } catch {
      return [] // the sample's deliberately broken lines
    }
  })
function ingredientsOf(i: number): string {
  const parts = REAL_TEXTS[i % REAL_TEXTS.length]!
  const turn = Math.floor(i / REAL_TEXTS.length) % parts.length
  const rotated = [...parts.slice(turn), ...parts.slice(0, turn)]
  rotated[0] = `${rotated[0]} ${(i % 1000) / 10}%`
  return rotated.join(', ')
}
function* lines() {
  for (let i = 0; i < ROWS; i++) {
    const body = `761${String(i).padStart(9, '0')}`
    yield `${JSON.stringify({
      code: `${body}${gs1CheckDigit(body)}`,
      product_name: `${WORDS[i % 10]} ${WORDS[(i >> 3) % 10]} ${i}`,
      brands: `Brand ${i % 5000}`,
      quantity: `${(i % 90) * 10 + 100} g`,
      labels_tags: i % 4 ? [] : ['en:organic'],
      ingredients_text: ingredientsOf(i),
      last_modified_t: 1_700_000_000 + i,
    })}\n`
  }
}

say(`generating ${ROWS} rows…`)
await pipeline(Readable.from(lines()), createGzip({ level: 1 }), createWriteStream(file))

process.env.FEED_DIR = feedDir
const bench = await startBenchServer(4)
const { createRun, getRun } = await import('../../src/feeds/runs')
const { parseId } = await import('../../src/shared/ids')
const { pool } = await import('../../src/db/client')

// The catalog floor, before the import (the tables are dropped after): the lines are staged by
// COPY (not timed), then the two timed statements write what any import of them must write.
const client = await pool.connect()
await client.query('create unlogged table bench_staging (line text)')
await pipeline(
  createReadStream(file),
  createGunzip(),
  client.query(copyFrom(`copy bench_staging (line) from stdin with (format csv, quote e'\\x01', delimiter e'\\x02')`)),
)
await client.query(`create table bench_floor_products (like products including defaults)`)
await client.query('alter table bench_floor_products add primary key (id), add unique (gtin)')
await client.query(`create table bench_floor_statements (like product_candidates including defaults)`)
await client.query('alter table bench_floor_statements add primary key (id)')
await client.query('create index on bench_floor_statements (product_id)')
let started = performance.now()
await client.query(`insert into bench_floor_products (gtin, product_name, net_content, ingredients_text, data_source)
  select '0' || (j->>'code'), j->>'product_name', j->>'quantity', j->>'ingredients_text', 'open_food_facts'
  from (select line::jsonb as j from bench_staging) s`)
const productsSeconds = (performance.now() - started) / 1000
started = performance.now()
await client.query(`insert into bench_floor_statements (product_id, fields, source, confidence)
  select p.id, jsonb_build_object('product_name', p.product_name, 'net_content', p.net_content,
    'ingredients_text', p.ingredients_text), 'open_food_facts', 0.7
  from bench_floor_products p`)
const statementsSeconds = (performance.now() - started) / 1000
await client.query('drop table bench_staging, bench_floor_products, bench_floor_statements')
await client.query('checkpoint')
client.release()
const floorRate = ROWS / (productsSeconds + statementsSeconds)
say(
  `catalog floor: products ${productsSeconds.toFixed(1)} s + statements ${statementsSeconds.toFixed(1)} s = ${floorRate.toFixed(0)} rows/s`,
)

/**
 * CPU time the embedded database has used so far (its postmaster, the backends it reaped and those
 * alive), in seconds: with the server's, what the import costs, whatever else runs on the machine.
 */
function databaseCpuSeconds(): number {
  const children = (pid: number) =>
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .flatMap((p) => {
        try {
          const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')
          return Number(fields[1]) === pid ? [Number(p)] : []
        } catch {
          return []
        }
      })
  const postmaster = children(process.pid).find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('postgres'))
  if (!postmaster) return 0
  const reaped = readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (
    cpuSecondsOf(postmaster) +
    (Number(reaped[13]) + Number(reaped[14])) / 100 +
    children(postmaster).reduce((sum, p) => sum + cpuSecondsOf(p), 0)
  )
}

const profile = await statementProfile(pool)
const cpuBefore = { server: bench.cpuSeconds(), database: databaseCpuSeconds() }
// the WAL the import writes (every table's rows and indexes, and the chunks' payloads), and how many
// full-page images it holds (a page's first change after a checkpoint is written whole)
const walAt = async () =>
  (await pool.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn
const pageImages = async () =>
  Number((await pool.query<{ n: string }>('select wal_fpi::text as n from pg_stat_wal')).rows[0]!.n)
const walBefore = await walAt()
const imagesBefore = await pageImages()
const activity = watchImport(pool, serverPid())
started = performance.now()
const run = await createRun(bench.database.db, null, { source: 'off', path: file })
const id = parseId(run.id)!
let status = run
let shown = -1
while (status.status === 'queued' || status.status === 'running') {
  await Bun.sleep(500)
  status = await getRun(bench.database.db, null, id)
  const percent = status.progress.percent
  if (percent >= shown + 10) {
    shown = percent
    const elapsed = (performance.now() - started) / 1000
    say(
      `import ${percent}%: ${status.progress.rows_written} of ${status.progress.rows_total ?? '?'} rows, ${(status.progress.rows_written / elapsed).toFixed(0)} rows/s`,
    )
  }
}
const seconds = (performance.now() - started) / 1000
if (status.status !== 'succeeded') {
  // nothing to wait for: the search figures would wait for products that were never written
  console.log(`\n${ROWS} rows, run ${status.status}: ${status.error}`)
  for (const line of activity.report()) console.log(line)
  await bench.stop()
  rmSync(feedDir, { recursive: true, force: true })
  process.exit(1)
}
const cpu = { server: bench.cpuSeconds() - cpuBefore.server, database: databaseCpuSeconds() - cpuBefore.database }
const activityLines = activity.report()
const walBytes = Number(
  (await pool.query<{ d: string }>('select pg_wal_lsn_diff($1, $2)::text as d', [await walAt(), walBefore])).rows[0]!.d,
)
const walImages = (await pageImages()) - imagesBefore
await profile?.(ROWS, 'row')
// the search drain after the import, statement by statement (when pg_stat_statements runs)
const drainProfile = await statementProfile(pool)

// (c) searchable: the search feature's pending documents drained, then a sample found by the API
const searchStarted = performance.now()
const { pendingSearchDocuments } = await import('../../src/search')
for (let last = -1; ; ) {
  const pending = await pendingSearchDocuments(bench.database.db)
  if (pending === 0) break
  if (pending !== last)
    say(
      `search: ${pending} documents pending, ${((performance.now() - searchStarted) / 1000).toFixed(0)} s after the import`,
    )
  last = pending
  await Bun.sleep(500)
}
const drainedSeconds = (performance.now() - searchStarted) / 1000
const { createOrganization } = await import('../../src/accounts/organizations')
const reader = (await createOrganization(bench.database.db, { name: 'Bench reader', owner_email: 'bench@example.com' }))
  .api_key
const sample = Array.from({ length: 20 }, (_, k) => Math.floor(((k + 0.5) / 20) * ROWS))
for (const i of sample) {
  const name = `${WORDS[i % 10]} ${WORDS[(i >> 3) % 10]} ${i}`
  for (;;) {
    const res = await fetch(`${bench.base}/catalog/api/v1/search?q=${encodeURIComponent(name)}&type=product&limit=5`, {
      headers: { 'x-api-key': reader.key },
    })
    const body = (await res.json()) as { results: { name: string }[] }
    if (res.status === 200 && body.results.some((r) => r.name === name)) break
    await Bun.sleep(500)
  }
}
const searchableSeconds = (performance.now() - searchStarted) / 1000
say(
  `searchable: documents built ${drainedSeconds.toFixed(1)} s after the import, the sample found by the API ${(searchableSeconds - drainedSeconds).toFixed(1)} s later`,
)
await drainProfile?.(ROWS, 'row (the search drain after the import)', 8)
const peak = bench.peakRss()
await bench.stop()
rmSync(feedDir, { recursive: true, force: true })

const rate = ROWS / seconds
const percentOfFloor = (rate / floorRate) * 100
const peakMb = peak / 1024 / 1024
const row = (name: string, value: string, target: string, ok: boolean) =>
  console.log(`${name.padEnd(28)} ${value.padStart(12)}   target ${target.padEnd(10)} ${ok ? 'met' : 'NOT met'}`)
console.log(`\n${ROWS} rows, run ${status.status}, counts ${JSON.stringify(status.counts)}`)
row('end to end rows/s', rate.toFixed(0), '', true)
console.log(
  `import: ${seconds.toFixed(1)} s, CPU server ${cpu.server.toFixed(1)} s + database ${cpu.database.toFixed(1)} s (load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}), WAL ${(walBytes / 1024 / 1024).toFixed(0)} MB (${walImages} full-page images)`,
)
for (const line of activityLines) console.log(line)
row('catalog floor rows/s', floorRate.toFixed(0), '(floor)', true)
row('share of the floor', `${percentOfFloor.toFixed(0)} %`, '>= 50 %', percentOfFloor >= 50)
row('searchable after import s', searchableSeconds.toFixed(1), '<= 120', searchableSeconds <= 120)
row('peak RSS (server) MB', peakMb.toFixed(0), '< 500', peakMb < 500)
console.log(
  `ingest: ${rate.toFixed(0)} rows/s end to end, ${percentOfFloor.toFixed(0)}% of the catalog floor, searchable ${searchableSeconds.toFixed(0)} s after, peak RSS ${peakMb.toFixed(0)} MB`,
)
process.exit(status.status === 'succeeded' ? 0 : 1)
