import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from '../support/fixtures'
import { ROOT, run } from '../support/process'
import { databaseUrl } from '../support/server'

// Issue 48, "the first hour" and "the CLI": the Node version the dependencies need, said where a
// newcomer and the tools look; the CLI's help, version, file errors, plurals and batch limits.

const cli = (...args: string[]) =>
  run([process.execPath, 'scripts/cli/index.ts', ...args], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' })

const dir = mkdtempSync(join(tmpdir(), 'cli-polish-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const text = (file: string) => readFileSync(join(ROOT, file), 'utf8')
/** A file name, relative to the CLI's working directory, that does not exist. */
const missing = (ext: string) => `missing-${crypto.randomUUID().slice(0, 8)}.${ext}`

describe('Node.js 22.12 or later (pg-boss 12, puppeteer-core)', () => {
  test('package.json engines, .nvmrc, the Dockerfile and the README Start section agree', () => {
    const pkg = JSON.parse(text('package.json')) as { engines?: { node?: string } }
    expect(pkg.engines?.node).toBe('>=22.12')
    expect(text('.nvmrc').trim()).toBe('22')
    const from = text('Dockerfile').match(/^FROM\s+node:(\d+)/m)
    expect(Number(from?.[1])).toBeGreaterThanOrEqual(22)
    const start = text('README.md')
      .split(/^## /m)
      .find((s) => s.startsWith('Start\n'))!
    expect(start).toContain('Node.js 22.12 or later')
    expect(start).not.toMatch(/Node\.js 20\b/)
  })
})

describe('cli polish', () => {
  test("each command's own --help marks its required options", async () => {
    // commander wraps at the terminal's width: compare with the white space collapsed
    const help = async (...command: string[]) => {
      const r = await cli(...command, '--help')
      expect(r.code).toBe(0)
      return r.stdout.replace(/\s+/g, ' ')
    }
    const batch = await help('barcode', 'batch')
    expect(batch).toContain('--input <file.csv> the GTINs, one per row (columns gtin, label) (required)')
    expect(batch).toContain('--output <file> labels.pdf (a sheet) or labels.zip (one image per row) (required)')
    expect(batch).toMatch(/--template <name> [^(]*\(choices: "a4-3x8", "letter-3x10", default: "a4-3x8"\) --type/)
    const replay = await help('events', 'replay')
    for (const option of ['--organization <id> the organization', '--endpoint <id> the webhook endpoint'])
      expect(replay).toContain(`${option} (required)`)
    expect(replay).toContain('--since <time> ISO 8601 time, e.g. 2026-11-01T00:00:00Z (required) --json')
    expect(replay).toContain('--json print {endpoint_id, since, queued} as JSON -h')
    const feeds = await help('feeds', 'import')
    expect(feeds).toContain('--file <path> the file (gzip allowed) (required)')
    expect(feeds).toMatch(/--source <source> where the file comes from \(choices: [^)]*\) \(required\)/)
    // the root's list of every command says it once, not twice
    const root = await cli('--help')
    expect(root.stdout).toContain('--name <name>                organization name (required)\n')
    expect(root.stdout).not.toContain('(required) (required)')
  })

  test('--version prints package.json version and exits 0', async () => {
    const { version } = JSON.parse(text('package.json')) as { version: string }
    for (const flag of ['--version', '-V']) {
      const r = await cli(flag)
      expect(r.code).toBe(0)
      expect(r.stdout.trim()).toBe(version)
    }
  })

  test('a missing file is a sentence naming it, never a raw ENOENT, and nothing is stored', async () => {
    const runsBefore = (await sql<{ n: number }>('select count(*)::int as n from feed_runs'))[0]!.n
    const csv = missing('csv')
    const batch = await cli('barcode', 'batch', '--input', csv, '--output', join(dir, 'never.pdf'))
    expect(batch.code).toBe(2)
    expect(batch.output).toContain(`cannot read ${csv}: no such file`)
    expect(existsSync(join(dir, 'never.pdf'))).toBe(false)

    const feed = missing('jsonl')
    const imported = await cli('feeds', 'import', '--source', 'off', '--file', feed)
    expect(imported.code).toBe(2)
    expect(imported.output).toContain(`cannot read ${feed}: no such file`)
    const schedules = missing('json')
    const checked = await cli('feeds', 'schedules', '--file', schedules)
    expect(checked.code).toBe(1)
    expect(checked.output).toContain(`cannot read ${schedules}: no such file`)
    const folder = await cli('feeds', 'import', '--source', 'off', '--file', dir)
    expect(folder.code).toBe(2)
    expect(folder.output).toContain(`cannot read ${dir}: it is a folder, not a file`)

    for (const r of [batch, imported, checked, folder]) {
      expect(r.output).not.toContain('ENOENT')
      expect(r.output).not.toContain('EISDIR')
    }
    const runsAfter = (await sql<{ n: number }>('select count(*)::int as n from feed_runs'))[0]!.n
    expect(runsAfter).toBe(runsBefore)
  })

  test('counts take the right number: 1 label, 1 row skipped; 2 rows skipped', async () => {
    const one = join(dir, 'one.csv')
    writeFileSync(one, 'gtin,label\n4006381333931,pen\n4006381333932,bad check digit\n')
    const out = join(dir, 'one.pdf')
    const r = await cli('barcode', 'batch', '--input', one, '--output', out)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`1 label written to ${out}; 1 row skipped`)
    expect(existsSync(out)).toBe(true)

    const two = join(dir, 'two.csv')
    writeFileSync(two, 'gtin\n4006381333931\n4006381333931\n123\nabc\n')
    const r2 = await cli('barcode', 'batch', '--input', two, '--output', join(dir, 'two.pdf'))
    expect(r2.code).toBe(0)
    expect(r2.stdout).toContain('2 labels written to')
    expect(r2.stdout).toContain('; 2 rows skipped')
  }, 30_000)

  test('batch limits are worded for the command line, not as an API request body', async () => {
    const big = join(dir, 'big.csv')
    writeFileSync(big, `gtin\n${'4006381333931\n'.repeat(10_001)}`)
    const out = join(dir, 'big.pdf')
    const over = await cli('barcode', 'batch', '--input', big, '--output', out)
    expect(over.code).toBe(2)
    expect(over.output).toContain(`${big} has 10001 rows; one run renders at most 10000: split the file`)
    expect(existsSync(out)).toBe(false)

    const headless = join(dir, 'headless.csv')
    writeFileSync(headless, '4006381333931\n')
    const bad = await cli('barcode', 'batch', '--input', headless, '--output', out)
    expect(bad.code).toBe(2)
    expect(bad.output).toContain(`${headless}: the CSV needs a header row with a gtin column`)
    const empty = join(dir, 'empty.csv')
    writeFileSync(empty, 'gtin,label\n')
    const none = await cli('barcode', 'batch', '--input', empty, '--output', out)
    expect(none.code).toBe(2)
    expect(none.output).toContain(`${empty}: the CSV has no data rows`)
    for (const r of [over, bad, none]) expect(r.output).not.toMatch(/\bbody\b/)
    expect(existsSync(out)).toBe(false)
  }, 30_000)
})
