// Feed ingestion benchmark (issue 14): a deterministic Open Food Facts style JSONL.gz of --rows
// products imported end to end by the service (chunk jobs: candidates, promotion, allergen and
// certification parsing, search columns, events), timed from the run's start to its success;
// the server process's peak RSS read from /proc. The floor, in the same run: the same lines
// loaded with a bare COPY into an unindexed table; beside it, the same products written into the
// catalog's table by one bare INSERT … SELECT (the ceiling its search columns and indexes allow).
// The service runs as configured (FEED_CHUNK_ROWS, FEED_CHUNK_CONCURRENCY: their defaults unless set).
//   npm run bench:ingest -- [--rows 1000000]
// Targets: >= 15,000 rows/s end to end, >= 25 % of the COPY rate, peak RSS < 500 MB.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { createGunzip, createGzip } from 'node:zlib'
import { from as copyFrom } from 'pg-copy-streams'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { startBenchServer } from './server'

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } })
const ROWS = Number(values.rows)
const feedDir = mkdtempSync(join(tmpdir(), 'ingest-bench-'))
const file = join(feedDir, 'off.jsonl.gz')
const say = (line: string) => console.error(line)

// Deterministic products: names, brands, quantities and ingredient lists drawn by index.
const WORDS = ['organic', 'crunchy', 'dark', 'chocolate', 'oat', 'honey', 'peanut', 'butter', 'tomato', 'basil']
const INGREDIENTS = ['wheat flour, sugar, palm oil, salt', 'milk, cocoa butter, soy lecithin', 'water, tomato, basil']
function* lines() {
  for (let i = 0; i < ROWS; i++) {
    const body = `761${String(i).padStart(9, '0')}`
    yield `${JSON.stringify({
      code: `${body}${gs1CheckDigit(body)}`,
      product_name: `${WORDS[i % 10]} ${WORDS[(i >> 3) % 10]} ${i}`,
      brands: `Brand ${i % 5000}`,
      quantity: `${(i % 90) * 10 + 100} g`,
      labels_tags: i % 4 ? [] : ['en:organic'],
      ingredients_text: INGREDIENTS[i % 3],
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

// the floor: a bare COPY of the same lines into an unindexed table
const client = await pool.connect()
await client.query('create unlogged table bench_copy_floor (line text)')
let started = performance.now()
await pipeline(
  createReadStream(file),
  createGunzip(),
  client.query(
    copyFrom(`copy bench_copy_floor (line) from stdin with (format csv, quote e'\\x01', delimiter e'\\x02')`),
  ),
)
const copySeconds = (performance.now() - started) / 1000
say(`COPY floor: ${ROWS} rows in ${copySeconds.toFixed(1)} s`)

// The catalog's own write floor: the same products (name, brand, quantity, ingredients) written
// straight into \`products\` by bare SQL, with its search columns, indexes and triggers, in a
// transaction rolled back. No import that stores these rows in the catalog can be faster. A
// sample of the rows (the first FLOOR_ROWS) keeps the run short; the emptied table is truncated
// so that the import starts as it would have.
const FLOOR_ROWS = Math.min(ROWS, 100_000)
const empty = (await client.query('select not exists (select from products) as empty')).rows[0].empty
await client.query('begin')
started = performance.now()
await client.query(`insert into brands (name)
  select distinct line::jsonb->>'brands' from (select line from bench_copy_floor limit ${FLOOR_ROWS}) s
  on conflict do nothing`)
await client.query(`insert into products (gtin, product_name, brand_id, net_content, ingredients_text, data_source)
  select '0' || (j->>'code'), j->>'product_name', b.id, j->>'quantity', j->>'ingredients_text', 'open_food_facts'
  from (select line::jsonb as j from bench_copy_floor limit ${FLOOR_ROWS}) s
  left join brands b on lower(b.name) = lower(j->>'brands') and b.organization_id is null`)
const insertSeconds = (performance.now() - started) / 1000
await client.query('rollback')
await client.query(empty ? 'truncate products, brands cascade' : 'vacuum products')
await client.query('drop table bench_copy_floor')
client.release()
say(`catalog INSERT floor: ${FLOOR_ROWS} rows in ${insertSeconds.toFixed(1)} s`)

started = performance.now()
const run = await createRun(bench.database.db, null, { source: 'off', path: file })
const id = parseId(run.id)!
let status = run
let shown = -1
while (status.status === 'queued' || status.status === 'running') {
  await Bun.sleep(500)
  status = await getRun(bench.database.db, null, id)
  if (status.progress.percent >= shown + 10) {
    shown = status.progress.percent
    say(
      `import ${status.progress.percent}% (${status.progress.chunks_done} of ${status.progress.chunks_total ?? '?'} chunks written)`,
    )
  }
}
const seconds = (performance.now() - started) / 1000
const peak = bench.peakRss()
await bench.stop()
rmSync(feedDir, { recursive: true, force: true })

const rate = ROWS / seconds
const copyRate = ROWS / copySeconds
const row = (name: string, value: string, target: string, ok: boolean) =>
  console.log(`${name.padEnd(24)} ${value.padStart(16)}   target ${target.padEnd(12)} ${ok ? 'met' : 'NOT met'}`)
console.log(`\n${ROWS} rows, run ${status.status}, counts ${JSON.stringify(status.counts)}`)
row('end to end rows/s', rate.toFixed(0), '>= 15000', rate >= 15_000)
row('wall time s', seconds.toFixed(1), '', true)
row('bare COPY rows/s', copyRate.toFixed(0), '(floor)', true)
row('ratio to COPY', `${((rate / copyRate) * 100).toFixed(1)} %`, '>= 25 %', rate / copyRate >= 0.25)
const insertRate = FLOOR_ROWS / insertSeconds
console.log(
  `${'bare INSERT into products'.padEnd(24)} ${insertRate.toFixed(0).padStart(16)}   rows/s (${((insertRate / copyRate) * 100).toFixed(1)} % of COPY): the catalog table's own ceiling, search columns and indexes written; the import reaches ${((rate / insertRate) * 100).toFixed(0)} % of it`,
)
row('peak RSS (server) MB', (peak / 1024 / 1024).toFixed(0), '< 500', peak < 500 * 1024 * 1024)
process.exit(0)
