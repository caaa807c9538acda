import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { ownCluster, postmastersOf, strayPostmaster, tempDir } from '../support/cluster'
import { eventually, ORGS, PRODUCTS, uniqueGtin } from '../support/fixtures'
import { freePort, start, startServer } from '../support/process'
import { api, databaseUrl, type Reply } from '../support/server'

// Issue 44, finding 7 (operations): with PostgreSQL down every route answers 503 problem+json
// with Retry-After, not 500, and the error log stays quiet; a server never shares its embedded
// cluster (not with a cluster a killed server left running, not with a second server), and a
// taken port stops a second process.

const ADMIN_TOKEN = 'outage-admin-token-0123456789'
const ADMIN = { 'x-admin-token': ADMIN_TOKEN }
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

type Line = { level: number; msg: string; [k: string]: unknown }
const lines = (output: string): Line[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))

function expectUnavailable(res: Reply, what: string) {
  expect(res.status, what).toBe(503)
  expect(res.headers.get('content-type'), what).toStartWith('application/problem+json')
  expect(res.headers.get('retry-after'), what).toMatch(/^[1-9][0-9]*$/)
  expect(res.json.code, what).toBe('service_unavailable')
  expect(res.text, what).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|select |node_modules|\.ts:/)
}

/** Starts `bun main.ts`, expecting it to fail: its exit code and fatal lines. */
async function failedStart(env: Record<string, string>) {
  const server = start([process.execPath, 'main.ts'], { HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env })
  const timer = setTimeout(() => server.kill('SIGKILL'), 30_000)
  const code = await server.exited
  clearTimeout(timer)
  return { code, fatal: lines(server.output()).filter((l) => l.level === 60) }
}

describe('PostgreSQL down', () => {
  test('every route answers 503 problem+json with Retry-After, errors are logged a few times, not per request; back when it is back', async () => {
    const dir = tempDir('outage')
    dirs.push(dir)
    const cluster = await ownCluster(dir)
    const server = await startServer({ DATABASE_URL: cluster.url, ADMIN_TOKEN, LOG_LEVEL: 'info' })
    const { call, get, post } = api(server.url)
    try {
      const created = await post(ORGS, { name: 'Outage Org', owner_email: 'owner@outage.test' }, undefined, ADMIN)
      expect(created.status).toBe(201)
      const key = created.json.api_key.key as string
      const keyed = { 'x-api-key': key }
      const gtin = uniqueGtin()
      expect((await post(PRODUCTS, { gtin, product_name: 'Oat Drink' }, key)).status).toBe(201)
      const product = await get(`${PRODUCTS}/${gtin}`, key)
      expect(product.status).toBe(200)
      const search = `/catalog/api/v1/search?q=${encodeURIComponent('Oat Drink')}`
      expect((await get(search)).status).toBe(200)
      const scan = `/01/${gtin.padStart(14, '0')}`
      const scanned = await get(scan)
      expect(scanned.status).toBeLessThan(500)

      await cluster.stop()
      const before = server.output().length
      const lost = uniqueGtin()
      const requests: [string, string, Record<string, string>, unknown?][] = [
        ['GET', `${PRODUCTS}/${gtin}`, keyed],
        ['GET', search, {}],
        ['GET', `${PRODUCTS}/${uniqueGtin()}`, keyed],
        ['GET', scan, {}],
        ['GET', `/01/${uniqueGtin().padStart(14, '0')}`, {}],
        ['POST', PRODUCTS, keyed, { gtin: lost, product_name: 'Lost' }],
        ['POST', ORGS, ADMIN, { name: 'Lost Org', owner_email: 'lost@outage.test' }],
        ['GET', `${ORGS}/${created.json.organization.id}/members`, keyed],
        ['GET', '/readyz', {}],
      ]
      // the scan of the product already scanned may be answered from the resolver's in-memory index
      // (no database needed: the same answer as before the outage); every other request is 503
      const fromMemory = (path: string, status: number) => path === scan && status === scanned.status
      let unavailable = 0
      for (const [method, path, headers, body] of requests) {
        const res = await call(method, path, { headers, body })
        if (!fromMemory(path, res.status)) expectUnavailable(res, `${method} ${path}`)
        if (res.status === 503) unavailable++
      }
      // a stream of them: 20 rounds, every route
      let answered = 0
      for (let round = 0; round < 20; round++) {
        const results = await Promise.all(requests.map(([m, p, h, b]) => call(m, p, { headers: h, body: b })))
        results.forEach((res, i) => {
          if (!fromMemory(requests[i]![1], res.status)) expect(res.status).toBe(503)
          if (res.status === 503) unavailable++
        })
        answered += results.length
      }
      expect((await get('/healthz')).status).toBe(200) // the process is up
      // every request has its line in the request log (written within a few milliseconds)
      const during = await eventually(async () => {
        const now = lines(server.output().slice(before))
        return now.filter((l) => l.status === 503).length >= unavailable ? now : null
      }, 10_000)
      const errors = during.filter((l) => l.level >= 40)
      // each kind of line (the 503s', the pool's, the listener's, pg-boss's) at most once per window
      const kinds = new Set(errors.map((l) => `${l.level}:${l.msg}`))
      for (const kind of kinds)
        expect(errors.filter((l) => `${l.level}:${l.msg}` === kind).length, kind).toBeLessThanOrEqual(2)
      expect(errors.length).toBeLessThan(answered / 5)
      expect(errors.some((l) => l.msg === 'unhandled error')).toBe(false)

      await cluster.start()
      const again = await eventually(async () => {
        const res = await get(`${PRODUCTS}/${gtin}`, key)
        return res.status === 200 ? res : null
      }, 30_000)
      expect(again.json).toEqual(product.json)
      expect((await get(search)).status).toBe(200)
      expect((await get(scan)).status).toBe(scanned.status)
      expect((await get('/readyz')).status).toBe(200)
      // what was refused during the outage was not stored
      const client = new pg.Client({ connectionString: cluster.url })
      await client.connect()
      const stored = await client.query(
        `select (select count(*)::int from products where gtin = $1) lost_products,
                (select count(*)::int from organizations where name = 'Lost Org') lost_orgs,
                (select count(*)::int from products) products`,
        [lost.padStart(14, '0')],
      )
      await client.end()
      expect(stored.rows[0]).toEqual({ lost_products: 0, lost_orgs: 0, products: 1 })
    } finally {
      server.kill('SIGTERM')
      await server.exited
      await cluster.remove()
    }
  }, 120_000)
})

describe('one server per embedded cluster', () => {
  test('after a kill -9 of the server, the next start runs exactly one postmaster, its own; a second server on its DATA_DIR or its port exits 1', async () => {
    const dir = tempDir('killed')
    dirs.push(dir)
    const env = { DATA_DIR: dir, DATABASE_URL: '', ADMIN_TOKEN, LOG_LEVEL: 'info' }
    const pgDir = join(dir, 'pg')
    const first = await startServer(env)
    const created = await api(first.url).post(
      ORGS,
      { name: 'Killed Org', owner_email: 'owner@killed.test' },
      undefined,
      ADMIN,
    )
    expect(created.status).toBe(201)
    expect(postmastersOf(pgDir).map((p) => p.parent)).toEqual([first.proc.pid!])
    process.kill(first.proc.pid!, 'SIGKILL') // the server alone, as an OOM killer or kill -9 would
    await first.exited

    const second = await startServer(env)
    try {
      const members = await api(second.url).get(
        `${ORGS}/${created.json.organization.id}/members`,
        created.json.api_key.key,
      )
      expect(members.status).toBe(200)
      expect(members.json.data[0].user_email).toBe('owner@killed.test')
      const postmasters = postmastersOf(pgDir)
      expect(postmasters).toHaveLength(1)
      expect(postmasters[0]!.parent).toBe(second.proc.pid!)

      const sameDir = await failedStart({ ...env, PORT: String(await freePort()) })
      expect(sameDir.code).toBe(1)
      expect(sameDir.fatal).toHaveLength(1)
      expect(sameDir.fatal[0]!.msg).toStartWith(
        `startup failed: another server (pid ${second.proc.pid}) is already running on DATA_DIR ${dir}`,
      )

      const port = new URL(second.url).port
      const samePort = await failedStart({ DATABASE_URL: databaseUrl, PORT: port, ADMIN_TOKEN })
      expect(samePort.code).toBe(1)
      expect(samePort.fatal).toHaveLength(1)
      expect(samePort.fatal[0]!.msg).toBe(
        `startup failed: port ${port} on 127.0.0.1 is already in use: stop the other process or set PORT`,
      )
      // the first server still answers every request from its own database
      for (let i = 0; i < 20; i++) expect((await api(second.url).get('/readyz')).status).toBe(200)
      expect(postmastersOf(pgDir)).toEqual(postmasters)
    } finally {
      second.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    }
    expect(postmastersOf(pgDir)).toEqual([]) // stopped with the service
  }, 120_000)

  test('a SIGTERM while the server starts is carried out once it has started: exit 0, its cluster stopped', async () => {
    const dir = tempDir('early-stop')
    dirs.push(dir)
    const server = start(['sh', 'bin/serve'], {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      DATABASE_URL: '',
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
    })
    // still starting: its embedded cluster runs, its migrations and queues are not done yet
    await eventually(() => (postmastersOf(join(dir, 'pg')).length > 0 ? true : null))
    server.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(lines(server.output()).some((l) => l.msg === 'stopped')).toBe(true)
    expect(postmastersOf(join(dir, 'pg'))).toEqual([])
  }, 120_000)

  test('a cluster left running with no live server (its server killed where no parent-death signal exists) is stopped, not joined', async () => {
    const dir = tempDir('stray')
    dirs.push(dir)
    const env = { DATA_DIR: dir, DATABASE_URL: '', ADMIN_TOKEN, LOG_LEVEL: 'info' }
    const pgDir = join(dir, 'pg')
    const first = await startServer(env) // creates the cluster, stops it at SIGTERM
    first.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    expect(existsSync(join(pgDir, 'postmaster.pid'))).toBe(false)

    // what a killed server leaves: its cluster running, and its lock naming a process that is gone
    const stray = await strayPostmaster(pgDir, await freePort())
    const strayExit = new Promise((done) => stray.once('exit', done))
    writeFileSync(join(dir, 'server.pid'), `${JSON.stringify({ pid: 2 ** 22 + 1, started: '1', kind: 'server' })}\n`)

    const second = await startServer(env)
    try {
      const stopped = await Promise.race([strayExit.then(() => true), Bun.sleep(20_000).then(() => false)])
      expect(stopped).toBe(true) // the server stopped it rather than joining it
      const postmasters = postmastersOf(pgDir)
      expect(postmasters).toHaveLength(1)
      expect(postmasters[0]!.parent).toBe(second.proc.pid!)
      expect(postmasters[0]!.pid).not.toBe(stray.pid!)
      expect(Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0])).toBe(postmasters[0]!.pid)
      expect(JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8')).pid).toBe(second.proc.pid)
      expect((await api(second.url).get('/readyz')).status).toBe(200)
      const warned = lines(second.output()).find((l) =>
        l.msg?.startsWith('stopped an embedded PostgreSQL that no live server owned'),
      )
      expect(warned?.pid).toBe(stray.pid)
    } finally {
      second.kill('SIGTERM')
      await second.exited
      stray.kill('SIGKILL')
    }
  }, 120_000)
})
