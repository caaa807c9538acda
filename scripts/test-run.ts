// Runs the test tiers in parallel lanes and reports each file's duration.
//
//   bun scripts/test-run.ts [unit|integration|e2e|<path>…] [--lanes=N] [--update-timings] [bun test flags…]
//
// Tiers: test/unit (pure functions, no database: run with test/unit/bunfig.toml, which has no
// preload), test/integration (the shared server and database of test/support/preload.ts) and
// test/e2e (processes, crashes, Chromium, tsc). A lane is one `bun test` process with its own
// embedded PostgreSQL, so lanes share nothing; most of a test's time is spent waiting (on
// PostgreSQL, a child process, the network), so several lanes on two cores end sooner than one.
// Files are dealt to lanes slowest first by test/timings.json (longest processing time first),
// so the lanes end together; --update-timings writes this run's durations back to it.
// Ends with the line "N passed, N failed" (CI reads it).

import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { Glob } from 'bun'

const ROOT = join(import.meta.dir, '..')
const TIERS = ['unit', 'integration', 'e2e'] as const
type Tier = (typeof TIERS)[number]
const TIMINGS = join(ROOT, 'test', 'timings.json')
// a file not yet in test/timings.json: about the median file
const UNKNOWN_MS = 5_000
// bun test reads no timeout from bunfig.toml, so each lane is given it: a test slower than this
// fails (bun's own default, 5 s, failed tests that only waited on a busy machine)
const TIMEOUT_MS = 30_000

type FileResult = { file: string; ms: number; tests: number; assertions: number; failures: number }
type Lane = { tier: Tier | 'db'; files: string[]; estimate: number }

function parseArgs(argv: string[]) {
  const selected: string[] = []
  const passThrough: string[] = []
  // two lanes per core and one more (a lane spends much of its time waiting on processes that start,
  // crash or time out), five at most: on the 2-core machine 5 lanes ended about as soon as 4 or
  // sooner (3:55 against 4:00 for npm test), 6 later (4:33), their clusters and servers competing
  let lanes = Number(process.env.TEST_LANES) || Math.min(5, cpus().length * 2 + 1)
  let updateTimings = false
  for (const arg of argv) {
    if (arg.startsWith('--lanes=')) lanes = Number(arg.slice('--lanes='.length)) || 1
    else if (arg === '--update-timings') updateTimings = true
    else if ((TIERS as readonly string[]).includes(arg) || existsSync(join(ROOT, arg))) selected.push(arg)
    else passThrough.push(arg)
  }
  return { selected: selected.length ? selected : [...TIERS], passThrough, lanes, updateTimings }
}

const tierOf = (file: string): Tier | null => TIERS.find((t) => file.startsWith(`test/${t}/`)) ?? null

function filesOf(selection: string[]): string[] {
  const found = new Set<string>()
  for (const item of selection) {
    const path = (TIERS as readonly string[]).includes(item) ? `test/${item}` : relative(ROOT, join(ROOT, item))
    if (statSync(join(ROOT, path)).isFile()) found.add(path)
    else for (const f of new Glob('**/*.test.ts').scanSync({ cwd: join(ROOT, path) })) found.add(join(path, f))
  }
  return [...found].sort()
}

function readTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMINGS, 'utf8')).files ?? {}
  } catch {
    return {}
  }
}

/** Unit files in one lane of their own (no database); the others dealt over `count` lanes. */
function dealLanes(files: string[], count: number, timings: Record<string, number>): Lane[] {
  const estimate = (f: string) => timings[f] ?? UNKNOWN_MS
  const unit = files.filter((f) => tierOf(f) === 'unit')
  const rest = files.filter((f) => tierOf(f) !== 'unit').sort((a, b) => estimate(b) - estimate(a))
  const lanes: Lane[] = Array.from({ length: Math.max(1, Math.min(count, rest.length)) }, () => ({
    tier: 'db',
    files: [],
    estimate: 0,
  }))
  for (const file of rest) {
    const lane = lanes.reduce((least, l) => (l.estimate < least.estimate ? l : least))
    lane.files.push(file)
    lane.estimate += estimate(file)
  }
  const all = lanes.filter((l) => l.files.length)
  if (unit.length) all.unshift({ tier: 'unit', files: unit, estimate: unit.reduce((s, f) => s + estimate(f), 0) })
  return all
}

const attr = (tag: string, name: string) => tag.match(new RegExp(` ${name}="([^"]*)"`))?.[1] ?? ''

/** The files of a junit report (bun's: one top-level <testsuite> per file, its time with hooks). */
function readJunit(path: string): FileResult[] {
  if (!existsSync(path)) return []
  const xml = readFileSync(path, 'utf8')
  return [...xml.matchAll(/^ {2}<testsuite [^>]*>/gm)].map(([tag]) => ({
    file: attr(tag, 'file'),
    ms: Math.round(Number(attr(tag, 'time')) * 1000),
    tests: Number(attr(tag, 'tests')),
    assertions: Number(attr(tag, 'assertions')),
    failures: Number(attr(tag, 'failures')),
  }))
}

/** bun test's closing counts ("N pass", "N fail", "N expect() calls"). */
function counts(output: string) {
  const last = (re: RegExp) => Number([...output.matchAll(re)].at(-1)?.[1] ?? 0)
  return {
    passed: last(/^ *(\d+) pass$/gm),
    failed: last(/^ *(\d+) fail$/gm),
    assertions: last(/^ *(\d+) expect\(\) calls$/gm),
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** Each failed test of a lane's output: its "(fail)" line and the error lines bun printed before it. */
function failuresOf(output: string): string[] {
  const lines = output.split('\n')
  const found: string[] = []
  let start = 0
  let file = ''
  lines.forEach((line, i) => {
    if (line.endsWith('.test.ts:')) file = line.slice(0, -1)
    if (line.startsWith('(fail)')) found.push([`${file}:`, ...lines.slice(Math.max(start, i - 12), i), line].join('\n'))
    if (/^\((pass|fail|skip|todo)\)|\.test\.ts:$/.test(line)) start = i + 1
  })
  return found
}

async function runLane(lane: Lane, index: number, dir: string, passThrough: string[]) {
  const report = join(dir, `lane-${index}.xml`)
  const config = lane.tier === 'unit' ? ['--config=test/unit/bunfig.toml'] : []
  const started = Date.now()
  const proc = Bun.spawn(
    [
      process.execPath,
      'test',
      ...config,
      `--timeout=${TIMEOUT_MS}`,
      '--reporter=junit',
      `--reporter-outfile=${report}`,
      ...passThrough,
      ...lane.files,
    ],
    { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, TEST_LANE: String(index) } },
  )
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  const output = out + err
  const ms = Date.now() - started
  const label = lane.tier === 'unit' ? 'unit' : 'database'
  console.log(`\n── lane ${index} (${label}, ${lane.files.length} files) ended in ${seconds(ms)}, exit ${code} ──`)
  console.log(output.trimEnd())
  return { code, output, ms, files: readJunit(report), failures: failuresOf(output), ...counts(output) }
}

const { selected, passThrough, lanes: laneCount, updateTimings } = parseArgs(process.argv.slice(2))
const files = filesOf(selected)
const timings = readTimings()
const lanes = dealLanes(files, laneCount, timings)
const dir = mkdtempSync(join(tmpdir(), 'gtin-test-run-'))
const started = Date.now()
console.log(
  `${files.length} test files in ${lanes.length} lanes (${lanes.map((l) => `${l.files.length} files ~${seconds(l.estimate)}`).join(', ')})`,
)
const results = await Promise.all(lanes.map((lane, i) => runLane(lane, i + 1, dir, passThrough)))
rmSync(dir, { recursive: true, force: true })

const measured = results.flatMap((r) => r.files).sort((a, b) => b.ms - a.ms)
console.log('\nEach file, slowest first (seconds, tests, expect() calls):')
for (const f of measured)
  console.log(
    `${(f.ms / 1000).toFixed(1).padStart(7)}  ${f.file}  ${f.tests}  ${f.assertions}${f.failures ? `  ${f.failures} failed` : ''}`,
  )
const missing = files.filter((f) => !measured.some((m) => m.file === f))
if (missing.length) console.log(`no report for: ${missing.join(', ')}`)

for (const tier of TIERS) {
  const mine = measured.filter((f) => tierOf(f.file) === tier)
  if (!mine.length) continue
  const sum = (key: 'tests' | 'assertions' | 'failures') => mine.reduce((s, f) => s + f[key], 0)
  console.log(
    `${tier}: ${mine.length} files, ${sum('tests')} tests, ${sum('assertions')} expect() calls, ${sum('failures')} failed`,
  )
}
if (updateTimings) {
  const merged = { ...timings, ...Object.fromEntries(measured.map((f) => [f.file, f.ms])) }
  // only files that still exist, sorted by path so a change reads as a diff
  const files = Object.fromEntries(
    Object.entries(merged)
      .filter(([f]) => existsSync(join(ROOT, f)))
      .sort(([a], [b]) => a.localeCompare(b)),
  )
  writeFileSync(TIMINGS, `${JSON.stringify({ version: 1, files }, null, 2)}\n`)
  console.log(`durations written to ${relative(ROOT, TIMINGS)}`)
}

// repeated next to the closing line, so a reader of the log's tail sees what failed and why
const failures = results.flatMap((r) => r.failures)
if (failures.length) console.log(`\nFailed:\n${failures.join('\n\n')}\n`)

const total = results.reduce(
  (s, r) => ({ passed: s.passed + r.passed, failed: s.failed + r.failed, assertions: s.assertions + r.assertions }),
  { passed: 0, failed: 0, assertions: 0 },
)
// a lane that ended badly without counting a failure (it crashed, or a file failed to load) still fails the run
const broken = results.filter((r) => r.code !== 0).length
const failed = Math.max(total.failed, broken)
console.log(`${total.assertions} expect() calls in ${seconds(Date.now() - started)} over ${lanes.length} lanes`)
console.log(`${total.passed} passed, ${failed} failed`)
process.exit(results.some((r) => r.code !== 0) ? 1 : 0)
