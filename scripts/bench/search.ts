// Search benchmark (issue 12): a synthetic catalog (default 1,000,000 products, 50,000 brands,
// 5,000 retailers; deterministic), then GET /catalog/api/v1/search at concurrency 16 for each kind
// of query, p50/p95/p99, next to the floor: the very SQL statements the endpoint runs for each
// query (recorded from the search code), replayed through `pg` at the same concurrency, prepared
// the same way (named, on as many connections as the search pool has, SEARCH_POOL_SIZE, with its
// session settings). Both sides are
// warmed up first (connections opened, statements prepared), so the figures are the steady state.
//   npm run bench:search -- [--products 1000000] [--seconds 10] [--keep DIR]
// `--keep DIR` keeps the database (and its seeded catalog) in DIR: a later run with the same DIR
// skips the seeding, which takes minutes at a million products.
// Load from wrk when installed (apt-get install wrk), else fetch in this process.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { haveWrk } from './load'
import { seedCatalog } from './search-catalog'
import { startBenchServer } from './server'

const { values } = parseArgs({
  options: {
    products: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    keep: { type: 'string' },
  },
})
const PRODUCTS = Number(values.products)
const SECONDS = Number(values.seconds)
const CONCURRENCY = 16
const work = mkdtempSync(join(tmpdir(), 'gtin-bench-search-'))
const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`)

const KINDS: Record<string, string[]> = {
  'single word': ['chocolate', 'granola', 'salami', 'lemonade', 'pesto', 'wafers'],
  'two words': ['dark chocolate', 'green tea', 'smoked salmon', 'honey granola', 'spicy chips', 'vanilla yogurt'],
  phrase: ['"peanut butter"', '"olive oil"', '"sea salt"', '"ice cream"', '"tomato basil"', '"green tea"'],
  exclusion: ['chocolate -milk', 'tea -green', 'cookies -honey', 'soup -tomato', 'chips -paprika', 'jam -peach'],
  or: ['tea OR coffee', 'jam OR honey', 'ham OR salami', 'soda OR juice', 'pasta OR noodles', 'tuna OR salmon'],
  'prefix (typing)': ['choc', 'gran', 'lemo', 'pret', 'hum', 'bisc'],
  'substring fallback': ['ocolat', 'anola', 'monade', 'etzel', 'ummus', 'iscuit'],
  'typo (fuzzy)': ['choclate', 'granloa', 'lemonaed', 'pretzles', 'humus', 'bicsuits'],
  gtin: ['4000000012344', '0400000050000', '400000100000', '4000009999995', '4000000777778', '4000005000004'],
  'word + filters': [
    'chocolate&exclude_allergens=milk&certifications=organic',
    'cookies&exclude_allergens=gluten',
    'ham&exclude_substances=e250',
    'granola&certifications=vegan',
    'tea&exclude_allergens=nuts&exclude_allergens=milk',
    'soup&certifications=organic&type=product',
  ],
}
const pathOf = (q: string) => {
  const [text, ...filters] = q.split('&')
  return `/catalog/api/v1/search?q=${encodeURIComponent(text!)}${filters.map((f) => `&${f}`).join('')}`
}

const bench = await startBenchServer(2, values.keep)
const { db } = await import('../../src/db/client')
const { createOrganization } = await import('../../src/accounts/organizations')
const { api_key, organization } = await createOrganization(db, { name: 'Bench Search', owner_email: 's@example.test' })
const { parseId } = await import('../../src/shared/ids')

const pool = new pg.Pool({ connectionString: bench.database.url, max: CONCURRENCY + 2 })
const { PREPARED_SESSION } = await import('../../src/db/client')
// the floor's connections: as many as the pool search statements run on, with its session settings
const floorPool = new pg.Pool({
  connectionString: bench.database.url,
  max: bench.config.SEARCH_POOL_SIZE,
  options: PREPARED_SESSION,
})
{
  const client = await pool.connect()
  const t0 = performance.now()
  const held = Number((await client.query<{ n: string }>(`select count(*) n from products`)).rows[0]!.n)
  if (held === PRODUCTS) say(`reusing the catalog seeded in ${values.keep}`)
  else if (held > 0)
    throw new Error(`${values.keep} holds ${held} products, not ${PRODUCTS}: keep in another directory`)
  else {
    say(`seeding ${PRODUCTS.toLocaleString('en')} products, 50,000 brands, 5,000 retailers`)
    const { reindexAll } = await import('../../src/search')
    await seedCatalog(
      client,
      { products: PRODUCTS, brands: 50_000, retailers: 5_000 },
      parseId(organization.id)!,
      say,
      async () => {
        await reindexAll(db, () => {})
      },
    )
    say(`seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    // statistics as autovacuum keeps them a minute after a load: search reads its common words from them
    await client.query('analyze')
  }
  client.release()
}

// the statements each query runs, recorded from the search code through a wrapped pg client
type Statement = { name?: string; text: string; values?: unknown[] }
const recorded = new Map<string, Statement[]>()
{
  const { search } = await import('../../src/search/search')
  const { substanceSlug } = await import('../../src/catalog/ingredients/analyze')
  const original = pg.Client.prototype.query
  let log: Statement[] | null = null
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args as [
      string | { name?: string; text: string; values?: unknown[] },
      unknown[] | undefined,
    ]
    if (log)
      log.push(
        typeof config === 'string'
          ? { text: config, values }
          : { name: config.name, text: config.text, values: config.values ?? values },
      )
    return (original as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof original
  for (const queries of Object.values(KINDS))
    for (const q of queries) {
      const url = new URL(`http://x${pathOf(q)}`)
      const p = url.searchParams
      log = []
      await search(db, {
        q: p.get('q')!,
        types: (p.getAll('type').length ? p.getAll('type') : ['product', 'brand', 'retailer']) as never,
        limit: 20,
        excludeAllergens: p.getAll('exclude_allergens'),
        certifications: p.getAll('certifications'),
        excludeSubstances: p.getAll('exclude_substances').map((s) => substanceSlug(s) ?? s),
        organizationId: null,
      })
      if (log.length === 0) throw new Error(`no statement recorded for ${q}`)
      recorded.set(q, log)
      log = null
    }
  pg.Client.prototype.query = original
}

type Figures = { requests: number; errors: number; p50: number; p95: number; p99: number }
const percentile = (sorted: Float64Array, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

async function closedLoop(once: (i: number) => Promise<boolean>, seconds: number): Promise<Figures> {
  const latencies: number[] = []
  let errors = 0
  let n = 0
  const until = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now()
        if (!(await once(n++).catch(() => false))) errors++
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: sorted.length,
    errors,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
  }
}

/** The endpoint under wrk: its Lua script cycles the paths and prints p50/p95/p99 in microseconds. */
async function endpoint(queries: string[], key: string, seconds = SECONDS): Promise<Figures> {
  if (!haveWrk())
    return closedLoop(
      (i) =>
        fetch(bench.base + pathOf(queries[i % queries.length]!), { headers: { 'x-api-key': key } }).then(async (r) => {
          await r.arrayBuffer()
          return r.status === 200
        }),
      seconds,
    )
  const script = join(work, 'search.lua')
  writeFileSync(
    script,
    `local paths = {${queries.map((q) => JSON.stringify(pathOf(q))).join(', ')}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
done = function(summary, latency, requests)
  io.write(string.format("FIGURES %d %d %d %d %d\\n", summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99)))
end
`,
  )
  const proc = Bun.spawn(
    ['wrk', '-t1', `-c${CONCURRENCY}`, `-d${seconds}s`, '-s', script, '-H', `x-api-key: ${key}`, bench.base],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const m = out.match(/FIGURES (\d+) (\d+) (\d+) (\d+) (\d+)/)
  if (!m) throw new Error(`wrk printed no figures: ${out}`)
  const [requests, errors, p50, p95, p99] = m.slice(1).map(Number) as [number, number, number, number, number]
  return { requests, errors, p50: p50 / 1000, p95: p95 / 1000, p99: p99 / 1000 }
}

let floorError: string | null = null
/** The floor: the recorded statements of each query, replayed through pg at the same concurrency. */
function floor(queries: string[], seconds = SECONDS): Promise<Figures> {
  return closedLoop(async (i) => {
    const client = await floorPool.connect()
    try {
      for (const s of recorded.get(queries[i % queries.length]!)!)
        await client.query({ name: s.name, text: s.text, values: s.values })
      return true
    } catch (err) {
      floorError ??= String(err)
      return false
    } finally {
      client.release()
    }
  }, seconds)
}

say('warming up: connections opened and statements prepared on both sides')
for (const queries of Object.values(KINDS)) {
  await floor(queries, 1)
  await endpoint(queries, api_key.key, 1)
}
floorError = null

const rows: string[] = []
for (const [kind, queries] of Object.entries(KINDS)) {
  say(`measuring ${kind}`)
  const sql = await floor(queries)
  const api = await endpoint(queries, api_key.key)
  const f = (x: Figures) =>
    `${x.p50.toFixed(1).padStart(7)}${x.p95.toFixed(1).padStart(8)}${x.p99.toFixed(1).padStart(8)}`
  const met = api.errors === 0 && sql.errors === 0 && api.requests > 0
  const targets = met && api.p95 < 50 && api.p99 < 100 && api.p50 <= 2 * sql.p50 ? 'yes' : 'NO'
  rows.push(
    `${kind.padEnd(20)}${f(api)}${String(api.errors).padStart(6)}  ${f(sql)}${String(sql.errors).padStart(6)}${(api.p50 / sql.p50).toFixed(2).padStart(9)}x  ${targets}`,
  )
}
console.log(
  `\n${PRODUCTS.toLocaleString('en')} products, 50,000 brands, 5,000 retailers; concurrency ${CONCURRENCY} over ${bench.config.SEARCH_POOL_SIZE} connections (SEARCH_POOL_SIZE), ${SECONDS} s per kind and side; load from ${haveWrk() ? 'wrk' : 'fetch'}; keyed requests (no anonymous limit)\n`,
)
console.log(
  `${'kind'.padEnd(20)}${'endpoint ms: p50'.padStart(7)}     p95     p99  errors   ${'SQL floor: p50'.padStart(7)}     p95     p99  errors  p50 ratio  targets`,
)
for (const r of rows) console.log(r)
if (floorError) console.log(`\nfloor error: ${floorError}`)
console.log('\ntargets: endpoint p95 < 50 ms and p99 < 100 ms, and endpoint p50 within 2x of its SQL floor')

await pool.end()
await floorPool.end()
await bench.stop()
process.exit(0)
