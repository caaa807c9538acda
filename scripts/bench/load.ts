import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
/** Closed-loop load: `concurrency` workers each issue `once()` back to back for `seconds`. */
export type LoadResult = { name: string; requests: number; errors: number; rps: number; p50: number; p99: number }

export async function measure(
  name: string,
  concurrency: number,
  seconds: number,
  once: () => Promise<boolean>,
): Promise<LoadResult> {
  const latencies: number[] = []
  let errors = 0
  const until = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now()
        const ok = await once().catch(() => false)
        latencies.push(performance.now() - t0)
        if (!ok) errors++
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  const sorted = Float64Array.from(latencies).sort()
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  return { name, requests: sorted.length, errors, rps: sorted.length / elapsed, p50: at(0.5), p99: at(0.99) }
}

/** The middle value of `xs` (the upper one of an even count): the figure interleaved rounds are compared by. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export function printTable(results: LoadResult[]) {
  const pad = (s: string, n: number) => s.padEnd(n)
  const width = Math.max(44, ...results.map((r) => r.name.length + 2))
  console.log(`${pad('scenario', width)}${pad('req/s', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}errors`)
  for (const r of results)
    console.log(
      `${pad(r.name, width)}${pad(r.rps.toFixed(0), 10)}${pad(r.p50.toFixed(2), 9)}${pad(r.p99.toFixed(2), 9)}${r.errors}`,
    )
}

const toMs = (value: string, unit: string) => Number(value) * ({ us: 0.001, ms: 1, s: 1000, m: 60000 }[unit] ?? 1)

/** Whether `wrk` (Debian package wrk) is installed: a C load generator, far lighter than fetch. */
export const haveWrk = () => Bun.spawnSync(['sh', '-c', 'command -v wrk']).exitCode === 0

/**
 * Separate CPUs for the server and the load generator, through `taskset` (util-linux), when the
 * machine has two CPUs or more: the server's process on the first, wrk on the last. Sharing cores,
 * the scheduler lets each preempt the other, and the load generator's own delays show up as the
 * server's latency tail. Call it before starting the database: this process moves to the load
 * generator's CPU, and what it starts afterwards (the embedded PostgreSQL) with it. Empty
 * launchers (nothing pinned) where that cannot be done.
 */
export function cpuPinning(): { server: string[]; load: string[]; note: string } {
  const cpus = navigator.hardwareConcurrency
  if (cpus < 2 || Bun.spawnSync(['sh', '-c', 'command -v taskset']).exitCode !== 0)
    return { server: [], load: [], note: 'not pinned' }
  Bun.spawnSync(['taskset', '-apc', String(cpus - 1), String(process.pid)])
  return {
    server: ['taskset', '-c', '0'],
    load: ['taskset', '-c', String(cpus - 1)],
    note: `server on CPU 0; wrk, PostgreSQL and this process on CPU ${cpus - 1}`,
  }
}

/** One wrk run (1 thread, `concurrency` connections) against `url`; `launcher` as in `cpuPinning`. */
export async function measureWithWrk(
  name: string,
  url: string,
  concurrency: number,
  seconds: number,
  headers: Record<string, string> = {},
  luaScript?: string,
  launcher: string[] = [],
): Promise<LoadResult> {
  const args = [
    ...launcher,
    'wrk',
    '-t1',
    `-c${concurrency}`,
    `-d${seconds}s`,
    '--latency',
    ...(luaScript ? ['-s', luaScript] : []),
  ]
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`)
  const proc = Bun.spawn([...args, url], { stdout: 'pipe', stderr: 'pipe' })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const pct = (p: string) => {
    const m = out.match(new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm'))
    return m ? toMs(m[1]!, m[2]!) : Number.NaN
  }
  const requests = Number(out.match(/(\d+) requests in/)?.[1] ?? 0)
  const non2xx = Number(out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0)
  const socketErrors =
    (out.match(/Socket errors: (.*)/)?.[1] ?? '').match(/\d+/g)?.reduce((a, b) => a + Number(b), 0) ?? 0
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0)
  return { name, requests, errors: non2xx + socketErrors, rps, p50: pct('50'), p99: pct('99') }
}

/** A wrk Lua script that requests `paths` in turn (GET); returns the script's file path (removed at exit). */
export function pathsScript(name: string, paths: string[]): string {
  const script = join(tmpdir(), `${name}-${process.pid}.lua`)
  process.on('exit', () => rmSync(script, { force: true }))
  writeFileSync(
    script,
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(', ')}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
`,
  )
  return script
}
