// Runtime settings A/B: the service's scans under variants of bin/serve's environment (JavaScriptCore
// and allocator settings), each variant's server started afresh on one seeded resolver database,
// variants alternating within each round. On a machine whose speed swings for a minute or two at a
// time (this 2-CPU VM), only interleaved rounds compare settings.
//   npm run bench:runtime-ab -- [--variants JSON] [--rounds 3] [--seconds 10] [--products 10000] [--health]
// --variants: {"name": {"VAR": "value", …}, …}; an empty object is bin/serve's own defaults. The
// default compares those ("serve") with Bun's own heap sizing ("bun"). --health also measures
// /healthz before the scans. Each server gets 3 s of scans first (the rule index loads on first use).
// Printed per run: scans req/s, p50, p99, the server's CPU µs a scan and its peak resident memory.
// A run whose CPU a scan stands far above the others' of its variant ran in a slow spell.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuPinning, haveWrk, type LoadResult, measureWithWrk, median, pathsScript } from './load'
import { startBenchServer } from './server'

const BUN_HEAP = {
  BUN_JSC_heapGrowthMaxIncrease: '2',
  BUN_JSC_minEdenToOldGenerationRatio: '0.3333',
  BUN_JSC_heapGrowthFunctionThresholdInMB: '16384',
  BUN_JSC_largeHeapSize: '8388608',
}
const { values } = parseArgs({
  options: {
    variants: { type: 'string', default: JSON.stringify({ serve: {}, bun: BUN_HEAP }) },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '64' },
    products: { type: 'string', default: '10000' },
    health: { type: 'boolean', default: false },
  },
})
if (!haveWrk()) throw new Error('needs wrk (apt-get install wrk)')
const variants = Object.entries(JSON.parse(values.variants) as Record<string, Record<string, string>>)
const [ROUNDS, SECONDS, CONCURRENCY] = [Number(values.rounds), Number(values.seconds), Number(values.concurrency)]
const say = (line: string) => console.log(`[bench] ${line}`)

const pinning = cpuPinning()
const dataDir = mkdtempSync(join(tmpdir(), 'runtime-ab-'))
try {
  const seeding = await startBenchServer(2, dataDir, pinning.server)
  const { db } = await import('../../src/db/client')
  const { seedResolverBench } = await import('./resolve-seed')
  say(`seeding ${Number(values.products).toLocaleString('en')} products`)
  const { key: apiKey, paths } = await seedResolverBench(db, Number(values.products))
  await seeding.stop()
  const script = pathsScript('runtime-ab', paths)
  const key = { 'x-api-key': apiKey }

  type Run = { scans: LoadResult; health?: LoadResult; cpuUs: number; rssMb: number }
  const runs = new Map<string, Run[]>(variants.map(([name]) => [name, []]))
  const range = (xs: number[], digits: number) =>
    `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)} (median ${median(xs).toFixed(digits)})`
  for (let round = 1; round <= ROUNDS; round++)
    for (const [name, env] of variants) {
      const bench = await startBenchServer(2, dataDir, pinning.server, env)
      try {
        await measureWithWrk('warm-up', bench.base, CONCURRENCY, 3, key, script, pinning.load)
        const health = values.health
          ? await measureWithWrk(
              '/healthz',
              `${bench.base}/healthz`,
              CONCURRENCY,
              SECONDS,
              key,
              undefined,
              pinning.load,
            )
          : undefined
        const cpu = bench.cpuSeconds()
        const scans = await measureWithWrk('scans', bench.base, CONCURRENCY, SECONDS, key, script, pinning.load)
        const run = {
          scans,
          health,
          cpuUs: ((bench.cpuSeconds() - cpu) / Math.max(1, scans.requests)) * 1e6,
          rssMb: bench.peakRss() / 1e6,
        }
        runs.get(name)!.push(run)
        say(
          `round ${round} ${name}: ${health ? `/healthz ${health.rps.toFixed(0)} req/s p99 ${health.p99.toFixed(2)} ms; ` : ''}scans ${scans.rps.toFixed(0)} req/s, p50 ${scans.p50.toFixed(2)} ms, p99 ${scans.p99.toFixed(2)} ms, ${scans.errors} errors, ${run.cpuUs.toFixed(0)} µs CPU a scan, peak RSS ${run.rssMb.toFixed(0)} MB`,
        )
      } finally {
        await bench.stop()
      }
    }

  console.log(
    `\n${ROUNDS} rounds; scans at concurrency ${CONCURRENCY}, ${SECONDS} s each; wrk (1 thread; ${pinning.note})\n`,
  )
  for (const [name, env] of variants) {
    const list = runs.get(name)!
    const of = (pick: (run: Run) => number, digits: number) => range(list.map(pick), digits)
    console.log(`${name} ${JSON.stringify(env)}`)
    console.log(`  scans req/s ${of((r) => r.scans.rps, 0)}; p99 ms ${of((r) => r.scans.p99, 2)}`)
    if (values.health) console.log(`  /healthz p99 ms ${of((r) => r.health!.p99, 2)}`)
    console.log(`  CPU µs a scan ${of((r) => r.cpuUs, 0)}; peak RSS MB ${of((r) => r.rssMb, 0)}`)
    console.log(`  errors ${list.reduce((n, r) => n + r.scans.errors, 0)}`)
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
