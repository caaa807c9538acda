import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseId } from '../../src/shared/ids'
import { createCampaign, createRetailer, rowsPath, sharesPath } from '../integration/advertising/support'
import { createOrganization, eventsSettled, PRODUCTS, sql, uniqueGtin } from '../support/fixtures'
import { run } from '../support/process'
import { call, databaseUrl, get, post } from '../support/server'

const cli = (...args: string[]) =>
  run([process.execPath, 'scripts/cli/index.ts', ...args], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' })

/** Every command of the CLI and its options: `--help` must list each of them. */
const COMMANDS: Record<string, string[]> = {
  'org create': ['--name', '--owner-email', '--owner-name', '--gs1-prefix', '--json'],
  'barcode batch': ['--input', '--output', '--template', '--type', '--format', '--module-width', '--no-text', '--dpi'],
  'feeds schedules': ['--file', '--count'],
  'feeds import': ['--source', '--file', '--retailer', '--full', '--format', '--json'],
  'search reindex': [],
  'revenue-share calculate': ['--period', '--rate', '--json'],
  'events replay': ['--organization', '--endpoint', '--since', '--json'],
}

describe('cli: one command library', () => {
  test('--help lists every command with its options, generated from the declarations', async () => {
    const help = await cli('--help')
    expect(help.code).toBe(0)
    const sections = help.stdout.split(/\n(?= {2}cli )/)
    for (const [command, options] of Object.entries(COMMANDS)) {
      const section = sections.find((s) => s.startsWith(`  cli ${command} `))
      expect(section, command).toBeDefined()
      for (const option of options) expect(section, `${command} ${option}`).toMatch(new RegExp(`\\n {6}${option}\\b`))
    }
    expect(help.stdout).toContain('--name <name>                organization name (required)')
  })

  test('logs go to stderr at warn: the defaults are set before any module reads the configuration', async () => {
    // the CLI's first import sets them (index.ts's own statements run after all its imports)
    const index = await Bun.file('scripts/cli/index.ts').text()
    expect(index.match(/^import .*$/m)?.[0]).toBe("import './env'")
    const dir = mkdtempSync(join(tmpdir(), 'cli-env-'))
    const probe = join(dir, 'probe.ts')
    const root = process.cwd()
    writeFileSync(
      probe,
      `import '${root}/scripts/cli/env'\nimport { flushLogs, logger } from '${root}/src/shared/logger'\nlogger.info('an info line')\nlogger.warn('a warn line')\nflushLogs()\n`,
    )
    const out = await run(['env', '-u', 'LOG_LEVEL', '-u', 'LOG_TARGET', process.execPath, probe], {})
    rmSync(dir, { recursive: true, force: true })
    expect(out.code).toBe(0)
    expect(out.stdout).toBe('')
    expect(out.output).toContain('a warn line')
    expect(out.output).not.toContain('an info line')
  })

  test('bad usage exits 2 with the reason; a command alone shows its help', async () => {
    const unknown = await cli('org', 'create', '--name', 'X', '--owner-email', 'x@x.test', '--colour', 'red')
    expect(unknown.code).toBe(2)
    expect(unknown.output).toContain("unknown option '--colour'")
    const choice = await cli('feeds', 'import', '--source', 'gs1', '--file', 'x.csv')
    expect(choice.code).toBe(2)
    expect(choice.output).toContain('Allowed choices are off, usda, affiliate')
    const missing = await cli('events', 'replay', '--organization', 'x')
    expect(missing.code).toBe(2)
    expect(missing.output).toContain("required option '--endpoint <id>' not specified")
    const nothing = await cli('revenue-share')
    expect(nothing.code).toBe(2)
    expect(nothing.output).toContain('calculate [options]')
    const badPeriod = await cli('revenue-share', 'calculate', '--period', '2031-13')
    expect(badPeriod.code).toBe(2)
    expect(badPeriod.output).toContain('period: must be a month YYYY-MM')
  })
})

describe('cli feeds schedules', () => {
  test('checks the file as a worker would and prints the next firings in UTC; a bad file exits 1 naming the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-schedules-'))
    const file = join(dir, 'schedules.json')
    writeFileSync(
      file,
      JSON.stringify({
        imports: [
          { name: 'off-nightly', cron: '30 2 * * *', tz: 'America/New_York', source: 'off', path: 'off/a.jsonl' },
        ],
      }),
    )
    const ok = await cli('feeds', 'schedules', '--file', file, '--count', '2')
    expect(ok.code).toBe(0)
    const lines = ok.stdout.trim().split('\n')
    expect(lines[0]).toBe('off-nightly: off from off/a.jsonl, "30 2 * * *" in America/New_York')
    // 02:30 in New York is 07:30 UTC in winter and 06:30 in summer, on consecutive days
    const firings = lines.slice(1).map((l) => new Date(l.trim()))
    expect(firings).toHaveLength(2)
    expect(firings[0]!.getTime()).toBeGreaterThan(Date.now())
    expect(firings[1]!.getTime() - firings[0]!.getTime()).toBeWithin(23 * 3_600_000, 25 * 3_600_000 + 1)
    expect(['07:30', '06:30']).toContain(firings[0]!.toISOString().slice(11, 16))
    writeFileSync(file, JSON.stringify({ imports: [{ name: 'x', cron: '61 * * * *', source: 'off', path: 'a' }] }))
    const bad = await cli('feeds', 'schedules', '--file', file)
    expect(bad.code).toBe(1)
    expect(bad.output).toContain('/imports/0 (x): cron "61 * * * *" in UTC')
    rmSync(dir, { recursive: true, force: true })
  })
})

describe('cli feeds import', () => {
  test('a run that fails exits 1 and prints the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-failing-'))
    const file = join(dir, 'array.jsonl')
    writeFileSync(file, '["code","product_name"]\n{"code":"4006381333931","product_name":"Pen"}\n')
    const r = await cli('feeds', 'import', '--source', 'off', '--format', 'off_jsonl', '--file', file)
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('failed: read 0, created 0')
    expect(r.stdout).toContain('error: the file is not')
    rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  test('runs the import through the pg-boss jobs with progress lines and ends with the counts', async () => {
    const file = 'test/fixtures/feeds/usda/branded_sample.json'
    const r = await cli('feeds', 'import', '--source', 'usda', '--file', file, '--json')
    expect(r.code).toBe(0)
    // rows, not a percent: the last line at 100 %, with the rate and an ETA that is a number
    expect(r.output).toMatch(new RegExp(`importing ${file} 10/10 rows \\(100%\\), [\\d,]+ rows/s, ETA 0 s`))
    expect(r.output).not.toContain('∞')
    const run = JSON.parse(r.stdout)
    expect(run).toMatchObject({ source: 'usda', status: 'succeeded', progress: { percent: 100 } })
    const c = run.counts
    expect(c.read).toBeGreaterThan(0)
    expect(c.created + c.updated + c.unchanged + c.rejected).toBe(c.read)
    const [stored] = await sql<{ status: string }>('select status from feed_runs where id = $1', [parseId(run.id)])
    expect(stored?.status).toBe('succeeded')

    const text = await cli('feeds', 'import', '--source', 'usda', '--file', file)
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`succeeded: read ${c.read}, created 0, updated 0, unchanged ${c.read - c.rejected}`)
  }, 60_000)
})

describe('cli revenue-share calculate', () => {
  test('computes the month in-process, prints the shares, and a rerun changes nothing', async () => {
    const org = await createOrganization()
    const retailer = await createRetailer(org)
    const campaign = (await createCampaign(org, retailer)).id
    const rows = [
      { date: '2033-03-01', impressions: 10, clicks: 1, spend: '10.005' },
      { date: '2033-03-31', impressions: 10, clicks: 1, spend: '0.1' },
      { date: '2033-04-01', impressions: 10, clicks: 1, spend: '99' },
    ]
    expect((await post(rowsPath(campaign), rows, org.key)).status).toBe(200)

    const first = await cli('revenue-share', 'calculate', '--period', '2033-03', '--rate', '0.15', '--json')
    expect(first.code).toBe(0)
    const mine = first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((s) => s.retailer_id === retailer)
    // 10.105 → 10.10 (half-even); fee 1.515 → 1.52; share 8.58
    expect(mine).toMatchObject({
      gross_revenue: '10.10',
      platform_fee: '1.52',
      retailer_share: '8.58',
      status: 'CALCULATED',
    })
    const listed = await get(`${sharesPath(org.id)}?period_start=2033-03-01`, org.key)
    expect(listed.json.data.map((s: any) => s.id)).toEqual([mine.id])

    const again = await cli('revenue-share', 'calculate', '--period', '2033-03', '--rate', '0.15')
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('2033-03: 0 shares calculated or changed')
  }, 60_000)
})

describe('cli events replay', () => {
  test("queues the organization's events since a time to one endpoint, as the recover route does", async () => {
    const org = await createOrganization()
    const since = new Date(Date.now() - 1000).toISOString()
    const products = [uniqueGtin(), uniqueGtin()].sort()
    for (const gtin of products)
      expect((await post(PRODUCTS, { gtin, product_name: 'Replayed' }, org.key)).status).toBe(201)
    await eventsSettled()
    // created after the events, so only the replay can give it deliveries of them (the name need
    // not resolve: the attempts fail and retry, which is not what this test looks at)
    const endpoint = await call('POST', '/webhooks/api/v1/endpoints/', {
      key: org.key,
      body: { url: 'https://hooks.replay.invalid/hook', event_types: ['product.created'] },
    })
    expect(endpoint.status).toBe(201)
    const deliveredEvents = async () =>
      (
        await sql<{ gtin: string }>(
          `select e.data->>'gtin' gtin from webhook_deliveries d join events e on e.id = d.event_id
           where d.endpoint_id = $1 order by 1`,
          [parseId(endpoint.json.id)],
        )
      ).map((r) => r.gtin)
    expect(await deliveredEvents()).toEqual([])

    const args = ['--endpoint', endpoint.json.id, '--since', since]
    const replay = await cli('events', 'replay', '--organization', org.id, ...args, '--json')
    expect(replay.code).toBe(0)
    expect(JSON.parse(replay.stdout)).toEqual({ endpoint_id: endpoint.json.id, since, queued: 2 })
    expect(await deliveredEvents()).toEqual(products.map((g) => g.padStart(14, '0')))

    const foreign = await createOrganization()
    const refused = await cli('events', 'replay', '--organization', foreign.id, ...args)
    expect(refused.code).toBe(1)
    expect(refused.output).toContain('webhook endpoint not found')
    const future = await cli(
      'events',
      'replay',
      '--organization',
      org.id,
      ...args.slice(0, 2),
      '--since',
      '2999-01-01T00:00:00Z',
    )
    expect(future.code).toBe(2)
    expect(await deliveredEvents()).toEqual(products.map((g) => g.padStart(14, '0')))
  }, 60_000)
})
