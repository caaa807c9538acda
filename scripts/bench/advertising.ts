// Advertising benchmark (issue 16): 1,000 campaigns × 365 days of performance rows imported through
// the API (gzip CSV uploads, one per advertiser, written by the pg-boss import job), against a bare
// COPY of the same rows into a table of the same shape; then the campaign summary (spec #6) and the
// campaign list (spec #9) at concurrency 32, against the bare no-op route of the same server.
//   npm run bench:advertising -- [--campaigns 1000] [--days 365] [--orgs 20] [--seconds 10] [--concurrency 32]
// Targets: import >= 50,000 rows/s; summary and list p99 under 25 ms.
// A throwaway embedded PostgreSQL; load from wrk when installed (apt-get install wrk), else fetch.
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { startBenchServer } from './server'

const { values } = parseArgs({
  options: {
    campaigns: { type: 'string', default: '1000' },
    days: { type: 'string', default: '365' },
    orgs: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '32' },
  },
})
const CAMPAIGNS = Number(values.campaigns)
const DAYS = Number(values.days)
const ORGS = Number(values.orgs)
const SECONDS = Number(values.seconds)
const CONCURRENCY = Number(values.concurrency)
const ROWS = CAMPAIGNS * DAYS

const bench = await startBenchServer()
const { createOrganization } = await import('../../src/accounts/organizations')
const { createRetailer } = await import('../../src/retailers/retailers')
const { createCampaign } = await import('../../src/advertising/campaigns')
const { db, pool } = await import('../../src/db/client')
const { parseId } = await import('../../src/shared/ids')
const { haveWrk, measure, measureWithWrk, pathsScript, printTable } = await import('./load')
const { from: copyFrom } = await import('pg-copy-streams')
const say = (line: string) => console.log(`[bench] ${line}`)

say(`seeding ${ORGS} advertisers with ${CAMPAIGNS.toLocaleString('en')} campaigns in all`)
type Advertiser = { id: string; key: string; campaigns: string[] }
const advertisers: Advertiser[] = []
for (let o = 0; o < ORGS; o++) {
  const { organization, api_key } = await createOrganization(db, {
    name: `Advertiser ${o}`,
    owner_email: `ads${o}@example.test`,
  })
  const orgId = parseId(organization.id)!
  const retailer = await createRetailer(db, orgId, { name: `Shop ${o}` }, false)
  const campaigns: string[] = []
  const count = Math.floor(CAMPAIGNS / ORGS) + (o < CAMPAIGNS % ORGS ? 1 : 0)
  for (let c = 0; c < count; c++)
    campaigns.push(
      (
        await createCampaign(db, orgId, {
          name: `Campaign ${o}-${c}`,
          retailer_id: parseId(retailer.id)!,
          budget: '10000',
          pricing_model: c % 2 ? 'CPC' : 'CPM',
          rate: '0.35',
        })
      ).id,
    )
  advertisers.push({ id: organization.id, key: api_key.key, campaigns })
}

const dates = Array.from({ length: DAYS }, (_, d) => new Date(Date.UTC(2025, 0, 1 + d)).toISOString().slice(0, 10))
/** One advertiser's year as CSV: deterministic figures with micro-dollar spend. */
const csvOf = (a: Advertiser) => {
  const lines = ['campaign_id,date,impressions,clicks,spend']
  a.campaigns.forEach((id, c) => {
    dates.forEach((date, d) => {
      const impressions = 1000 + ((c * 7919 + d * 104729) % 9000)
      const clicks = impressions % 97
      lines.push(`${id},${date},${impressions},${clicks},${(impressions * 0.00131).toFixed(6)}`)
    })
  })
  return `${lines.join('\n')}\n`
}
const files = advertisers.map((a) => gzipSync(csvOf(a)))
say(
  `${ROWS.toLocaleString('en')} rows in ${files.length} gzip CSV files (${(files.reduce((n, f) => n + f.length, 0) / 1e6).toFixed(1)} MB)`,
)

// the floor: the same rows COPYed into a bare table of the same shape, in this run
say('floor: COPY of the same rows into a bare table')
await db.execute(
  `create table bench_performance_floor (like campaign_performance including defaults including constraints including indexes)`,
)
const client = await pool.connect()
const copyStarted = performance.now()
for (const a of advertisers) {
  const rows = a.campaigns.flatMap((id, c) =>
    dates.map((date, d) => {
      const impressions = 1000 + ((c * 7919 + d * 104729) % 9000)
      return `${parseId(id)}\t${date}\timport\t${impressions}\t${impressions % 97}\t${(impressions * 0.00131).toFixed(6)}\n`
    }),
  )
  const stream = client.query(
    copyFrom('copy bench_performance_floor (campaign_id, date, source, impressions, clicks, spend) from stdin'),
  )
  await pipeline(async function* () {
    yield rows.join('')
  }, stream)
}
const copySeconds = (performance.now() - copyStarted) / 1000
client.release()
await db.execute('drop table bench_performance_floor')

say('importing through the API (POST /advertising/api/v1/performance/imports, one job per file)')
const importStarted = performance.now()
const ids = await Promise.all(
  advertisers.map(async (a, i) => {
    const res = await fetch(`${bench.base}/advertising/api/v1/performance/imports?file_name=year-${i}.csv.gz`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'content-type': 'application/gzip' },
      body: files[i],
    })
    if (res.status !== 202) throw new Error(`import refused: ${res.status} ${await res.text()}`)
    return ((await res.json()) as { id: string }).id
  }),
)
let lastLine = ''
for (;;) {
  const states = await Promise.all(
    ids.map(async (id, i) => {
      const res = await fetch(`${bench.base}/advertising/api/v1/performance/imports/${id}`, {
        headers: { 'x-api-key': advertisers[i]!.key },
      })
      return (await res.json()) as { status: string; processed: number; counts: Record<string, number>; error: string }
    }),
  )
  const failed = states.find((s) => s.status === 'failed')
  if (failed) throw new Error(`import failed: ${failed.error}`)
  const processed = states.reduce((n, s) => n + s.processed, 0)
  const line = `${processed.toLocaleString('en')} of ${ROWS.toLocaleString('en')} rows processed`
  if (line !== lastLine) say(line)
  lastLine = line
  if (states.every((s) => s.status === 'succeeded')) {
    const created = states.reduce((n, s) => n + s.counts.created!, 0)
    if (created !== ROWS) throw new Error(`created ${created} rows, expected ${ROWS}`)
    break
  }
  await Bun.sleep(200)
}
const importSeconds = (performance.now() - importStarted) / 1000
// reads are measured in the steady state, not under the autovacuum that a fresh 365,000 rows start
await db.execute('vacuum analyze campaign_performance, campaign_totals, campaigns')

// reading: one advertiser's campaigns, summary and list
const reader = advertisers[0]!
const key = { 'x-api-key': reader.key }
const summaryPaths = reader.campaigns.map((id) => `/advertising/api/v1/reporting/campaigns/${id}/summary`)
const listPath = `/advertising/api/v1/reporting/organizations/${reader.id}/campaigns`
const script = pathsScript('advertising', summaryPaths)
const wrk = haveWrk()
let n = 0
const fetchOnce = (path: () => string) => () =>
  fetch(bench.base + path(), { headers: key }).then(async (r) => {
    await r.arrayBuffer()
    return r.status === 200
  })
const run = (name: string, url: string, lua: string | undefined, once: () => Promise<boolean>) =>
  wrk ? measureWithWrk(name, url, CONCURRENCY, SECONDS, key, lua) : measure(name, CONCURRENCY, SECONDS, once)

say('warming up')
await measure(
  'warm-up',
  CONCURRENCY,
  2,
  fetchOnce(() => summaryPaths[n++ % summaryPaths.length]!),
)
await measure(
  'warm-up',
  CONCURRENCY,
  1,
  fetchOnce(() => listPath),
)
say('measuring')
const bare = await run(
  'GET /healthz (bare no-op route)',
  `${bench.base}/healthz`,
  undefined,
  fetchOnce(() => '/healthz'),
)
const summary = await run(
  'GET …/reporting/campaigns/{id}/summary',
  bench.base,
  script,
  fetchOnce(() => summaryPaths[n++ % summaryPaths.length]!),
)
const list = await run(
  `GET …/reporting/organizations/{id}/campaigns (${reader.campaigns.length})`,
  bench.base + listPath,
  undefined,
  fetchOnce(() => listPath),
)

const rate = ROWS / importSeconds
const floorRate = ROWS / copySeconds
console.log(
  `\n${CAMPAIGNS.toLocaleString('en')} campaigns × ${DAYS} days = ${ROWS.toLocaleString('en')} rows, ${ORGS} advertisers\n`,
)
console.log(`${'import'.padEnd(44)}${'rows/s'.padEnd(10)}seconds`)
console.log(`${'COPY into a bare table (floor)'.padEnd(44)}${floorRate.toFixed(0).padEnd(10)}${copySeconds.toFixed(2)}`)
console.log(
  `${'API upload → job → rows, totals (end to end)'.padEnd(44)}${rate.toFixed(0).padEnd(10)}${importSeconds.toFixed(2)}`,
)
console.log(
  `\nconcurrency ${CONCURRENCY}, ${SECONDS} s each; load from ${wrk ? 'wrk (1 thread)' : 'fetch in this process'}\n`,
)
printTable([bare, summary, list])
const importMet = rate >= 50_000
const readMet = summary.p99 < 25 && list.p99 < 25 && summary.errors === 0 && list.errors === 0
console.log(
  `\nimport: ${rate.toFixed(0)} rows/s (${((rate / floorRate) * 100).toFixed(0)} % of COPY; target >= 50,000): ${importMet ? 'met' : 'NOT met'}`,
)
console.log(
  `summary p99 ${summary.p99.toFixed(2)} ms, list p99 ${list.p99.toFixed(2)} ms (target < 25 ms): ${readMet ? 'met' : 'NOT met'}`,
)
await bench.stop()
