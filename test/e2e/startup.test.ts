import { afterAll, describe, expect, test } from 'bun:test'
import { appendFileSync, chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { startEmbeddedDatabase } from '../../src/db/embedded'
import { availableMemory } from '../../src/db/embedded-sizing'
import { ADMIN, sql } from '../support/fixtures'
import { freePort, start, startServer, waitForHealth } from '../support/process'
import { databaseUrl } from '../support/server'

// Startup failures end the process quickly with one line saying what failed and what to do;
// SIGTERM to `npm start` (npm alone, as a process manager sends it) stops the server; the line
// of a 500 is in the log even when the process is killed right after it.

const dirs: string[] = []
const tempDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `gtin-${label}-`))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) {
    chmodSync(dir, 0o755)
    rmSync(dir, { recursive: true, force: true })
  }
})

type Line = { level: number; msg: string; [k: string]: unknown }
const lines = (output: string): Line[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))

/** Starts `bun main.ts`, expects it to fail: exit code, elapsed ms and its fatal lines. */
async function failedStart(env: Record<string, string>) {
  const began = Date.now()
  const server = start([process.execPath, 'main.ts'], { HOST: '127.0.0.1', ...env })
  const timer = setTimeout(() => server.kill('SIGKILL'), 20_000)
  const code = await server.exited
  clearTimeout(timer)
  const fatal = lines(server.output()).filter((l) => l.level === 60)
  return { code, ms: Date.now() - began, fatal, output: server.output() }
}

describe('startup failures exit within 10 s with one line saying what to do', () => {
  test('PostgreSQL unreachable (DATABASE_URL to a closed port)', async () => {
    const port = await freePort()
    const { code, ms, fatal } = await failedStart({
      DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${port}/nothing`,
      PORT: String(await freePort()),
    })
    expect(code).toBe(1)
    expect(ms).toBeLessThan(10_000)
    expect(fatal).toHaveLength(1)
    expect(fatal[0]!.msg).toStartWith('startup failed: cannot reach PostgreSQL')
    expect(fatal[0]!.msg).toContain('check DATABASE_URL')
  }, 30_000)

  test('the port is taken', async () => {
    const taken = createServer()
    const port = await new Promise<number>((done) =>
      taken.listen(0, '127.0.0.1', () => done((taken.address() as { port: number }).port)),
    )
    try {
      const { code, ms, fatal } = await failedStart({ DATABASE_URL: databaseUrl, PORT: String(port) })
      expect(code).toBe(1)
      expect(ms).toBeLessThan(10_000)
      expect(fatal).toHaveLength(1)
      expect(fatal[0]!.msg).toBe(
        `startup failed: port ${port} on 127.0.0.1 is already in use: stop the other process or set PORT`,
      )
    } finally {
      taken.close()
    }
  }, 30_000)

  // PostgreSQL's own words reach the log: a cluster whose postgresql.conf holds a value it refuses.
  // (As root from a 0700 directory the cluster now starts elsewhere: test/e2e/root-home.test.ts.)
  test("the embedded PostgreSQL will not start: the line names the cause in PostgreSQL's words", async () => {
    const dataDir = tempDir('bad-conf')
    chmodSync(dataDir, 0o755)
    // a real cluster first (its socket in its own data directory, none in the temp directory)
    const cluster = await startEmbeddedDatabase(dataDir)
    const port = new URL(cluster.url).port
    expect(readdirSync(join(dataDir, 'pg'), { withFileTypes: true }).some((e) => e.name === `.s.PGSQL.${port}`)).toBe(
      true,
    )
    expect(readdirSync(tmpdir()).includes(`.s.PGSQL.${port}.lock`)).toBe(false)
    // sized to the machine when created (src/db/embedded-sizing.ts), not PostgreSQL's 128 MB and 1 GB:
    // an eighth of the memory, 128 MB to 1 GB, as PostgreSQL shows it
    const client = new pg.Client({ connectionString: cluster.url })
    await client.connect()
    const shown = async (name: string) => (await client.query(`show ${name}`)).rows[0][name]
    const eighth = Math.max(128, Math.min(1024, Math.floor(availableMemory() / 8 / 1024 / 1024)))
    expect(await shown('shared_buffers')).toBe(eighth === 1024 ? '1GB' : `${eighth}MB`)
    expect(await shown('max_wal_size')).toBe('4GB')
    await client.end()
    await cluster.stop()
    appendFileSync(join(dataDir, 'pg', 'postgresql.conf'), "\nshared_buffers = 'lots'\n")

    const { code, ms, fatal, output } = await failedStart({ DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0' })
    expect(code).toBe(1)
    expect(ms).toBeLessThan(10_000)
    expect(fatal).toHaveLength(1)
    expect(fatal[0]!.msg).toStartWith('startup failed: the embedded PostgreSQL exited with code 1')
    expect(fatal[0]!.msg).toContain('invalid value for parameter "shared_buffers": "lots"')
    expect(fatal[0]!.msg).not.toContain('undefined')
    // and every line it wrote, in the error line before it
    const said = lines(output).find((l) => l.msg === 'the embedded PostgreSQL did not start')
    expect(((said?.output ?? []) as string[]).some((l) => l.includes('shared_buffers'))).toBe(true)
  }, 60_000)
})

describe('signals', () => {
  test('SIGTERM to npm alone (not its process group) stops the server and frees the port', async () => {
    const port = await freePort()
    const server = start(['npm', 'start'], { DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1' })
    const url = `http://127.0.0.1:${port}`
    await waitForHealth(url)
    server.proc.kill('SIGTERM') // npm's own pid
    const timer = setTimeout(() => server.kill('SIGKILL'), 20_000)
    await server.exited // 'close': every process holding the output pipes has gone
    clearTimeout(timer)
    expect(server.output()).toContain('"msg":"stopped"')
    expect(fetch(`${url}/healthz`)).rejects.toThrow()
  }, 60_000)
})

describe('runtime settings (bin/serve, what npm start and the image run)', () => {
  /** The environment the process was started with, and the names of its threads (Linux /proc). */
  const processOf = (pid: number) => ({
    env: Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    ),
    threads: readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim()),
  })

  test('bun runs with the allocator and heap settings, without the heap warm-up thread; the environment overrides a setting', async () => {
    const server = await startServer({
      DATABASE_URL: databaseUrl,
      MIMALLOC_PURGE_DELAY: '250',
      BUN_JSC_heapGrowthMaxIncrease: '0.5',
    })
    try {
      for (let i = 0; i < 20; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      // sh exec's bun: the launched pid is the server itself
      const { env, threads } = processOf(server.proc.pid!)
      expect(readFileSync(`/proc/${server.proc.pid}/comm`, 'utf8').trim()).toStartWith('bun')
      expect(env.MIMALLOC_PURGE_DELAY).toBe('250')
      expect(env.BUN_JSC_heapGrowthMaxIncrease).toBe('0.5')
      expect(env.BUN_JSC_useWarmUpMarkedBlocks).toBe('0')
      // the setting took effect: JavaScriptCore starts no JSCWarmUp thread (a plain bun process has one)
      expect(threads).not.toContain('JSCWarmUp')
      expect(threads.length).toBeGreaterThan(1)
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
  }, 60_000)

  test('without settings in the environment, the launcher sets its defaults', async () => {
    const server = await startServer({ DATABASE_URL: databaseUrl })
    try {
      const { env } = processOf(server.proc.pid!)
      expect(env.MIMALLOC_PURGE_DELAY).toBe('1000')
      expect(env.BUN_JSC_useWarmUpMarkedBlocks).toBe('0')
      // small young generations (README, Configuration): Bun refuses to start on an option it does
      // not know, so a server that answers also says this Bun still has them
      expect(env.BUN_JSC_heapGrowthMaxIncrease).toBe('0.1')
      expect(env.BUN_JSC_minEdenToOldGenerationRatio).toBe('0.02')
      expect(env.BUN_JSC_heapGrowthFunctionThresholdInMB).toBe('0')
      expect(env.BUN_JSC_largeHeapSize).toBe('50331648')
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
  }, 60_000)
})

describe('crash lines reach the log', () => {
  test('the line of a 500 is there after a kill -9 right after it, without request values or emails', async () => {
    // A database of its own, broken under the running server: a retailer write then fails (500).
    const name = `crashlog_${Date.now()}`
    await sql(`create database ${name}`)
    const url = new URL(databaseUrl)
    url.pathname = `/${name}`
    const server = await startServer({ DATABASE_URL: url.href, ADMIN_TOKEN: ADMIN['x-admin-token'] })
    try {
      const created = await fetch(`${server.url}/account/api/v1/organizations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ADMIN },
        body: JSON.stringify({ name: 'Crash Log', owner_email: 'owner@crash-log.test' }),
      })
      expect(created.status).toBe(201)
      const { api_key } = (await created.json()) as { api_key: { key: string } }
      const admin = new pg.Client({ connectionString: url.href })
      await admin.connect()
      await admin.query('alter table retailers rename column name to name_gone')
      await admin.end()

      const res = await fetch(`${server.url}/retailers/api/v1/retailers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': api_key.key, 'x-request-id': 'crash-500' },
        body: JSON.stringify({
          name: 'Very Secret Retailer Name',
          website: 'https://secret.example',
          metadata: { contact: 'buyer@secret-retailer.test' },
        }),
      })
      expect(res.status).toBe(500)
      server.kill('SIGKILL')
      await server.exited

      const out = server.output()
      const line = lines(out).find((l) => l.request_id === 'crash-500' && l.level === 50)
      expect(line?.msg).toBe('unhandled error')
      expect(JSON.stringify(line)).toContain('42703') // what failed is said (undefined column)…
      for (const value of [
        'Very Secret Retailer Name',
        'secret.example',
        'buyer@secret-retailer.test',
        '@crash-log.test',
      ])
        expect(out).not.toContain(value) // …but no value of the request, and no email
    } finally {
      server.kill('SIGKILL')
      await server.exited
      await sql(`drop database if exists ${name} with (force)`)
    }
  }, 60_000)
})

describe("the server's own refusals are problem+json", () => {
  test('heads up to 128 KiB reach the service: a long query is 414, long headers 431, both problem+json', async () => {
    const server = await startServer({ DATABASE_URL: databaseUrl })
    try {
      const longQuery = await fetch(`${server.url}/retailers/api/v1/retailers?search=${'a'.repeat(20_000)}`)
      expect(longQuery.status).toBe(414)
      expect(longQuery.headers.get('content-type')).toStartWith('application/problem+json')
      expect(((await longQuery.json()) as { code: string }).code).toBe('uri_too_long')
      const longHeaders = await fetch(`${server.url}/healthz`, { headers: { 'x-padding': 'p'.repeat(40_000) } })
      expect(longHeaders.status).toBe(431)
      expect(longHeaders.headers.get('content-type')).toStartWith('application/problem+json')
      expect(((await longHeaders.json()) as { code: string }).code).toBe('headers_too_large')
      // scans, served from Bun's router outside the app's hooks, keep the same limits
      const longScan = await fetch(`${server.url}/01/04012345000012`, { headers: { 'x-padding': 'p'.repeat(40_000) } })
      expect(longScan.status).toBe(431)
      expect(((await longScan.json()) as { code: string }).code).toBe('headers_too_large')
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
  }, 60_000)
})
