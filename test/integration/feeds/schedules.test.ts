import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { loadSchedules } from '../../../src/feeds/schedules'
import { eventually } from '../../support/eventually'
import { ownDatabase } from '../../support/own-database'
import { start, startServer } from '../../support/process'

// Scheduled imports: a schedule file of cron entries (a server path, or a URL fetched at each run)
// becomes pg-boss schedules when a worker starts; each firing records a run as the API does.
const FIXTURE = join(import.meta.dir, '../../fixtures/feeds/off/products.jsonl')
const work = mkdtempSync(join(tmpdir(), 'feed-schedules-'))
const feedDir = join(work, 'feeds')
const scheduleFile = join(work, 'schedules.json')
const database = ownDatabase('feed_schedules')
let client: pg.Client
let origin: ReturnType<typeof Bun.serve>
const fetched: string[] = []

const writeSchedules = (imports: object[]) => writeFileSync(scheduleFile, JSON.stringify({ imports }))
const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: database.url,
  FEED_DIR: feedDir,
  FEED_SCHEDULE_FILE: scheduleFile,
  SCHEDULE_INTERVAL_SECONDS: '1',
  FEED_CHUNK_ROWS: '20',
  APP_ENV: 'development', // the feed origin is on loopback
  LOG_LEVEL: 'warn',
  ...extra,
})

beforeAll(async () => {
  mkdirSync(join(feedDir, 'off'), { recursive: true })
  copyFileSync(FIXTURE, join(feedDir, 'off', 'products.jsonl'))
  origin = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      fetched.push(path)
      if (path === '/latest') return Response.redirect('/dumps/products.jsonl', 302)
      if (path === '/dumps/products.jsonl') return new Response(Bun.file(FIXTURE))
      return new Response('gone', { status: 404 })
    },
  })
  await database.create()
  client = new pg.Client({ connectionString: database.url })
  await client.connect()
})

afterAll(async () => {
  await client?.end()
  origin?.stop(true)
  await database.drop()
  rmSync(work, { recursive: true, force: true })
})

const rows = async <T>(text: string, values: unknown[] = []) => (await client.query(text, values)).rows as T[]
const schedules = () =>
  rows<{ key: string; cron: string; timezone: string }>(
    `select key, cron, timezone from pgboss.schedule where name = 'feeds.scheduled' order by key`,
  )
const runs = () =>
  rows<{ file: string; status: string; error: string | null; path: string | null; counts: number }>(
    `select r.file, r.status, r.error, r.path, coalesce(sum(c.read), 0)::int counts
       from feed_runs r left join feed_run_chunks c on c.run_id = r.id group by r.id order by r.file`,
  )

describe('the schedule file', () => {
  test('is checked whole: every problem is named, nothing is scheduled', async () => {
    writeSchedules([
      { name: 'a', cron: '0 3 * * *', source: 'off', path: 'x.jsonl' },
      { name: 'a', cron: '0 3 * * *', source: 'off', path: 'y.jsonl', url: 'https://feeds.example/y' },
      { name: 'shop', cron: '0 3 * * *', source: 'affiliate', url: 'https://feeds.example/z.csv' },
      { name: 'ids', cron: '0 3 * * *', source: 'off', path: 'z', organization_id: 'not-an-id' },
      { name: 'zone', cron: '0 3 * * *', tz: 'Mars/Olympus', source: 'off', path: 'z' },
    ])
    const error = await loadSchedules(scheduleFile).catch((e: Error) => e.message)
    expect(error).toContain('(a): the name is used twice')
    expect(error).toContain('(a): give exactly one of path or url')
    expect(error).toContain('(shop): an affiliate feed needs retailer_id')
    expect(error).toContain('(ids): organization_id is not a shortuuid or UUID')
    expect(error).toContain('(zone): cron "0 3 * * *" in Mars/Olympus: Unknown or unsupported time zone')
    writeSchedules([{ name: 'bad name!', cron: '0 3 * * *', source: 'rss', path: 'x' }])
    const shape = await loadSchedules(scheduleFile).catch((e: Error) => e.message)
    expect(shape).toContain('/imports/0/name')
    expect(shape).toContain('/imports/0/source')
  })

  test('a worker refuses to start on a bad file or cron expression, scheduling nothing', async () => {
    writeSchedules([{ name: 'nightly', cron: 'every night', source: 'off', path: 'off/products.jsonl' }])
    const worker = start([process.execPath, 'main.ts'], { ...env(), ROLE: 'worker', PORT: '0' })
    const code = await worker.exited
    expect(code).not.toBe(0)
    expect(worker.output()).toContain('(nightly): cron \\"every night\\" in UTC')
    expect(await schedules()).toEqual([])
  }, 30_000)
})

describe('scheduled imports', () => {
  test('each entry becomes a keyed pg-boss schedule and fires: path, URL through a redirect, failing URL', async () => {
    const base = `http://127.0.0.1:${origin.port}`
    writeSchedules([
      { name: 'off-local', cron: '* * * * *', source: 'off', path: 'off/products.jsonl' },
      { name: 'off-remote', cron: '* * * * *', tz: 'Europe/Paris', source: 'off', url: `${base}/latest`, full: true },
      { name: 'off-gone', cron: '* * * * *', source: 'off', url: `${base}/missing.jsonl` },
    ])
    const server = await startServer(env())
    try {
      expect(await schedules()).toEqual([
        { key: 'off-gone', cron: '* * * * *', timezone: 'UTC' },
        { key: 'off-local', cron: '* * * * *', timezone: 'UTC' },
        { key: 'off-remote', cron: '* * * * *', timezone: 'Europe/Paris' },
      ])
      // the cron fires within a minute of the server's start
      const settled = await eventually(
        async () => {
          const r = await runs()
          return r.length >= 3 && r.every((run) => run.status !== 'queued' && run.status !== 'running') && r
        },
        60_000,
        'three scheduled runs to settle',
      )
      const byFile = Object.fromEntries(settled.map((r) => [r.file, r]))
      expect(byFile[`${base}/latest`]).toMatchObject({ status: 'succeeded', counts: 45, error: null })
      expect(byFile['off/products.jsonl']).toMatchObject({ status: 'succeeded', counts: 45, error: null })
      expect(byFile[`${base}/missing.jsonl`]).toMatchObject({ status: 'failed', path: null })
      expect(byFile[`${base}/missing.jsonl`]!.error).toBe(`the download failed: ${base}/missing.jsonl answered 404`)
      expect(fetched).toContain('/latest')
      expect(fetched).toContain('/dumps/products.jsonl')
      // the products the files hold are in the catalog, and the download is removed once read
      const [{ n }] = (await rows<{ n: number }>(`select count(*)::int n from products`)) as [{ n: number }]
      expect(n).toBe(40)
      expect(readdirSync(join(feedDir, 'downloads'))).toEqual([])
      // the remote run was flagged full (each run of it: a minute boundary during the test fires the
      // every-minute schedule again); the local file is still in place
      const remote = await rows<{ full: boolean }>(`select "full" from feed_runs where file = $1`, [`${base}/latest`])
      expect(remote.length).toBeGreaterThan(0)
      expect(remote.filter((r) => !r.full)).toEqual([])
      expect(readFileSync(join(feedDir, 'off', 'products.jsonl'), 'utf8')).toBe(readFileSync(FIXTURE, 'utf8'))
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
  }, 120_000)

  test('the file is the whole truth: a removed entry is unscheduled, a changed one rescheduled', async () => {
    writeSchedules([
      { name: 'off-local', cron: '30 4 * * 1', tz: 'America/New_York', source: 'off', path: 'off/products.jsonl' },
    ])
    const server = await startServer(env())
    try {
      expect(await schedules()).toEqual([{ key: 'off-local', cron: '30 4 * * 1', timezone: 'America/New_York' }])
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
  }, 60_000)
})
