import { afterAll, expect, test } from 'bun:test'
import pg from 'pg'
import { toShortId } from '../../src/shared/ids'
import { ADMIN, eventually, PRODUCTS, uniqueGtin } from '../support/fixtures'
import { ownDatabase } from '../support/own-database'
import { startServer } from '../support/process'
import { startReceiver } from '../support/receiver'
import { api } from '../support/server'

// Issue 13, "done when" 2: the worker is killed while deliveries are in flight; a new worker
// takes over and every event reaches the receiver at least once.
const database = ownDatabase('webhook_crash')
const env = {
  DATABASE_URL: database.url,
  APP_ENV: 'development',
  NODE_ENV: 'development',
  ADMIN_TOKEN: ADMIN['x-admin-token'],
  LOG_LEVEL: 'warn',
}
const receiver = startReceiver(() => ({ delayMs: 800 }))
const processes: Awaited<ReturnType<typeof startServer>>[] = []

afterAll(async () => {
  receiver.stop()
  for (const p of processes) p.kill('SIGKILL')
  await Promise.all(processes.map((p) => p.exited))
  await database.drop()
})

test('a worker killed mid-delivery loses no event', async () => {
  await database.create()
  const apiProcess = await startServer({ ...env, ROLE: 'api' })
  processes.push(apiProcess)
  const { post } = api(apiProcess.url)
  const org = await post(
    '/account/api/v1/organizations',
    { name: 'Crash Hooks', owner_email: 'c@hooks.test' },
    undefined,
    ADMIN,
  )
  const key: string = org.json.api_key.key
  const endpoint = await post(
    '/webhooks/api/v1/endpoints/',
    { url: `${receiver.url}/hook`, event_types: ['product.created'] },
    key,
  )
  expect(endpoint.json.signing_secret).toStartWith('whsec_')
  for (let i = 0; i < 40; i++) await post(PRODUCTS, { gtin: uniqueGtin(), product_name: `Crash ${i}` }, key)

  const worker = await startServer({ ...env, ROLE: 'worker' })
  processes.push(worker)
  // ten deliveries (the endpoint's cap) are in flight, none answered yet
  await eventually(async () => (receiver.received.length >= 10 ? true : null))
  worker.kill('SIGKILL')
  await worker.exited
  const seenBeforeRestart = receiver.received.length
  expect(seenBeforeRestart).toBeLessThan(40)

  processes.push(await startServer({ ...env, ROLE: 'worker' }))
  const db = new pg.Client({ connectionString: database.url })
  await db.connect()
  try {
    const { rows } = await db.query<{ id: string }>("select id from events where event_type = 'product.created'")
    expect(rows.length).toBe(40)
    const expected = rows.map((r) => toShortId(r.id)).sort()
    await eventually(async () => {
      const seen = new Set(receiver.received.map((r) => r.event.id))
      return expected.every((id) => seen.has(id)) ? true : null
    }, 90_000)
    const settled = await eventually(async () => {
      const { rows: open } = await db.query(
        "select count(*)::int n from webhook_deliveries where status <> 'succeeded'",
      )
      return open[0].n === 0 ? true : null
    }, 30_000)
    expect(settled).toBe(true)
    const { rows: counts } = await db.query('select count(*)::int n from webhook_deliveries')
    expect(counts[0].n).toBe(40)
  } finally {
    await db.end()
  }
}, 150_000)
