// Resolver A/B (issue 15): the server CPU a scan costs in this checkout against another revision,
// both serving one database, measured in alternating segments of one run. On a machine whose speed
// swings between runs (this 2-CPU VM: /healthz 15k-33k req/s), only interleaved figures compare
// two versions of the code.
//   npm run bench:resolve-ab -- --base <git revision> [--rounds 12] [--seconds 2] [--products 10000]
// The revision is checked out in a temporary git worktree (using this checkout's node_modules).
// Both servers run on the server CPU (cpuPinning), the one not measured idle. Each round measures
// both, in alternating order. Printed: medians of CPU µs per request, of the round's ratio (this
// checkout / base), and of req/s. p99 is not compared here: the idle server's own collections run
// on the same CPU. The latency target is bench:resolve's.
import { spawn } from 'node:child_process'
import { mkdtempSync, openSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuPinning, haveWrk, measure, measureWithWrk, median, pathsScript } from './load'
import { cpuSecondsOf, startBenchServer } from './server'

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '64' },
    products: { type: 'string', default: '10000' },
  },
})
if (!values.base) throw new Error('name the revision to compare with: --base <git revision>')
if (!haveWrk()) throw new Error('needs wrk (apt-get install wrk)')
const say = (line: string) => console.log(`[bench] ${line}`)
const git = (...args: string[]) => {
  const done = Bun.spawnSync(['git', ...args], { stderr: 'pipe' })
  if (done.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${done.stderr.toString().trim()}`)
  return done.stdout.toString().trim()
}

const revision = git('rev-parse', '--short', values.base)
const pinning = cpuPinning()
const bench = await startBenchServer(2, undefined, pinning.server)
const { db } = await import('../../src/db/client')
const { seedResolverBench } = await import('./resolve-seed')
const { freePort, waitForHealth } = await import('../../test/support/process')

// the worktree is made once the server is up, so that a failed start leaves nothing behind
const worktree = mkdtempSync(join(tmpdir(), 'resolve-ab-'))
try {
  git('worktree', 'add', '--detach', '--force', worktree, revision)
  symlinkSync(join(process.cwd(), 'node_modules'), join(worktree, 'node_modules'))
  say(`seeding ${Number(values.products).toLocaleString('en')} products; base ${revision} in ${worktree}`)
  const { key: apiKey, paths } = await seedResolverBench(db, Number(values.products))
  const port = await freePort()
  // this checkout's launcher runs the base's main.ts: the two differ in their code alone
  const launch = [...pinning.server, 'sh', join(process.cwd(), 'bin', 'serve')]
  const log = join(worktree, 'server.log')
  const baseServer = spawn(launch[0]!, launch.slice(1), {
    cwd: worktree,
    env: {
      ...process.env,
      DATABASE_URL: bench.database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      ROLE: process.env.SERVER_ROLE ?? 'all',
      LOG_LEVEL: bench.logLevel,
    },
    stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
  })
  const servers = [
    { name: 'this checkout', base: bench.base, cpu: bench.cpuSeconds },
    { name: `base ${revision}`, base: `http://127.0.0.1:${port}`, cpu: () => cpuSecondsOf(baseServer.pid!) },
  ]
  try {
    await waitForHealth(servers[1]!.base)
    const headers = { 'x-api-key': apiKey }
    const script = pathsScript('resolve-ab', paths)
    for (const server of servers) {
      say(`warming up ${server.name}`)
      let n = 0
      await measure('warm-up', 64, 3, () =>
        fetch(server.base + paths[n++ % paths.length]!, { headers, redirect: 'manual' }).then(async (r) => {
          await r.arrayBuffer()
          return r.status === 307
        }),
      )
    }
    const figures = servers.map(() => ({ us: [] as number[], rps: [] as number[], errors: 0 }))
    const rounds = Number(values.rounds)
    for (let round = 0; round < rounds; round++) {
      say(`round ${round + 1} of ${rounds}`)
      for (const i of round % 2 ? [1, 0] : [0, 1]) {
        const server = servers[i]!
        const before = server.cpu()
        const result = await measureWithWrk(
          server.name,
          server.base,
          Number(values.concurrency),
          Number(values.seconds),
          headers,
          script,
          pinning.load,
        )
        figures[i]!.us.push(((server.cpu() - before) / Math.max(1, result.requests)) * 1e6)
        figures[i]!.rps.push(result.rps)
        figures[i]!.errors += result.errors
      }
    }
    const [own, base] = figures as [(typeof figures)[0], (typeof figures)[0]]
    console.log(
      `\n${rounds} rounds of ${values.seconds} s a server, concurrency ${values.concurrency} (${pinning.note})\n`,
    )
    for (const [i, f] of figures.entries())
      console.log(
        `${servers[i]!.name.padEnd(16)} ${median(f.us).toFixed(1)} µs CPU a scan, ${median(f.rps).toFixed(0)} req/s, ${f.errors} errors (medians)`,
      )
    console.log(
      `\nthis checkout / base ${revision}: ${median(own.us.map((us, i) => us / base.us[i]!)).toFixed(3)} of the CPU a scan (median of the rounds' ratios)`,
    )
  } finally {
    baseServer.kill('SIGTERM')
    await new Promise((done) => baseServer.on('exit', done))
  }
} finally {
  await bench.stop()
  rmSync(worktree, { recursive: true, force: true })
  git('worktree', 'prune')
}
