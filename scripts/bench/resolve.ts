// Resolver benchmark (issue 15): 10,000 products with 50,000 resolution rules, then
// GET /01/{gtin} (with and without lot and serial, some with a linkType) at concurrency 64 against
// the bare no-op route of the same server, both in this run.
//   npm run bench:resolve -- [--seconds 10] [--concurrency 64] [--products 10000]
// Targets: p99 under 10 ms, and at least 50 % of the bare route's requests per second.
// A throwaway embedded PostgreSQL; load from wrk when installed (apt-get install wrk), else fetch.
// With two CPUs or more, the server and wrk each run on a CPU of their own (`cpuPinning`), both
// routes alike: on shared cores the load generator's own delays show up as the server's p99.
// With wrk, the same scans then go to Bun alone answering a constant 307 (runtime-floor.ts): the
// runtime's floor on this machine in this run, printed beside the targets, not one of them.
import { parseArgs } from 'node:util'
import { cpuPinning, haveWrk, type LoadResult, measure, measureWithWrk, pathsScript, printTable } from './load'
import { startBenchServer } from './server'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '64' },
    products: { type: 'string', default: '10000' },
  },
})
const SECONDS = Number(values.seconds)
const CONCURRENCY = Number(values.concurrency)
const PRODUCTS = Number(values.products)

const pinning = cpuPinning()
const bench = await startBenchServer(2, undefined, pinning.server)
const { db } = await import('../../src/db/client')
const { RULES_PER_PRODUCT, seedResolverBench } = await import('./resolve-seed')
const say = (line: string) => console.log(`[bench] ${line}`)

say(
  `seeding ${PRODUCTS.toLocaleString('en')} products and ${(PRODUCTS * RULES_PER_PRODUCT).toLocaleString('en')} rules`,
)
const { key: apiKey, paths } = await seedResolverBench(db, PRODUCTS)
for (const path of [paths[0]!, paths[2]!, `${paths[0]}/10/L1`])
  if ((await fetch(bench.base + path, { redirect: 'manual' })).status !== 307)
    throw new Error(`${path} does not redirect`)
const key = { 'x-api-key': apiKey }
const script = pathsScript('resolve', paths)
const wrk = haveWrk()
let n = 0
const fetchOnce = (path: () => string, status: number) => () =>
  fetch(bench.base + path(), { headers: key, redirect: 'manual' }).then(async (r) => {
    await r.arrayBuffer()
    return r.status === status
  })
const statements = async () => {
  const { rows } = await bench.database.db.$client.query(
    'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
  )
  return Number(rows[0].n)
}
const perRequest = new Map<string, { cpuUs: number; transactions: number }>()
/** One load run; also notes the server's CPU time and database transactions per request. */
async function run(name: string, url: string, lua: string | undefined, once: () => Promise<boolean>) {
  const [cpu, transactions] = [bench.cpuSeconds(), await statements()]
  const result = wrk
    ? await measureWithWrk(name, url, CONCURRENCY, SECONDS, key, lua, pinning.load)
    : await measure(name, CONCURRENCY, SECONDS, once)
  const requests = Math.max(1, result.requests)
  perRequest.set(name.split(' (')[0]!, {
    cpuUs: ((bench.cpuSeconds() - cpu) / requests) * 1e6,
    transactions: ((await statements()) - transactions) / requests,
  })
  return result
}

say('warming up')
await measure(
  'warm-up',
  CONCURRENCY,
  2,
  fetchOnce(() => paths[n++ % paths.length]!, 307),
)
say('measuring the bare route')
const bare = await run(
  'GET /healthz (bare no-op route)',
  `${bench.base}/healthz`,
  undefined,
  fetchOnce(() => '/healthz', 200),
)
say('measuring the resolver')
const resolve = await run(
  'GET /01/{gtin}[/10/{lot}[/21/{serial}]] (307)',
  bench.base,
  script,
  fetchOnce(() => paths[n++ % paths.length]!, 307),
)

await bench.stop()

/** The scans against Bun alone (runtime-floor.ts), on the server's CPU, once the service has stopped. */
async function runtimeFloor(): Promise<LoadResult> {
  const { freePort } = await import('../../test/support/process')
  const port = await freePort()
  const floor = Bun.spawn([...pinning.server, process.execPath, 'scripts/bench/runtime-floor.ts'], {
    env: { ...process.env, PORT: String(port) },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  try {
    const reader = floor.stdout.getReader()
    const first = await reader.read()
    if (!new TextDecoder().decode(first.value).includes('ready')) throw new Error('the runtime floor did not start')
    const base = `http://127.0.0.1:${port}`
    await measureWithWrk('warm-up', base, CONCURRENCY, 2, key, script, pinning.load)
    return await measureWithWrk(
      'Bun alone, constant 307 (runtime floor)',
      base,
      CONCURRENCY,
      SECONDS,
      key,
      script,
      pinning.load,
    )
  } finally {
    floor.kill()
    await floor.exited
  }
}
let floor: LoadResult | null = null
if (wrk) {
  say('measuring the runtime floor')
  floor = await runtimeFloor()
}

console.log(
  `\n${PRODUCTS.toLocaleString('en')} products, ${(PRODUCTS * RULES_PER_PRODUCT + 1).toLocaleString('en')} rules; concurrency ${CONCURRENCY}, ${SECONDS} s each; load from ${wrk ? `wrk (1 thread; ${pinning.note})` : 'fetch in this process'}; keyed requests (no anonymous limit)\n`,
)
printTable(floor ? [bare, resolve, floor] : [bare, resolve])
console.log('\nper request (server process CPU time; transactions of the whole database, background jobs included):')
for (const [name, { cpuUs, transactions }] of perRequest)
  console.log(`  ${name}: ${cpuUs.toFixed(0)} µs CPU, ${transactions.toFixed(4)} transactions`)
const share = resolve.rps / bare.rps
const met = resolve.errors === 0 && resolve.p99 < 10 && share >= 0.5
console.log(
  `\nresolver: ${(share * 100).toFixed(0)} % of the bare route's req/s (target >= 50 %), p99 ${resolve.p99.toFixed(2)} ms (target < 10 ms), ${resolve.errors} errors: targets ${met ? 'met' : 'NOT met'}`,
)
if (floor)
  console.log(
    `runtime floor in this run: Bun alone at ${floor.rps.toFixed(0)} req/s with p99 ${floor.p99.toFixed(2)} ms (the resolver's p99 is ${(resolve.p99 / floor.p99).toFixed(1)}x it)`,
  )
