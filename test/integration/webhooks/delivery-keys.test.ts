import { afterAll, beforeAll, expect, test } from 'bun:test'
import type pg from 'pg'
import { ownDatabase } from '../../support/own-database'

// Migration 0034 dropped two foreign keys of the fan-out's insert (webhook_deliveries.endpoint_id,
// webhook_pending_deliveries.delivery_id) and keeps their cascades with statement triggers: deleting
// endpoints (an organization's cascade) deletes their deliveries, their schedule rows and their
// failed attempts; deleting deliveries deletes their schedule rows. Nothing is left pointing at
// a row that is gone.
const database = ownDatabase('hooks_keys')
let db: pg.Client

beforeAll(async () => {
  await database.create()
  db = await database.migrated()
}, 60_000)

afterAll(async () => {
  await db?.end()
  await database.drop()
})

const query = async <T>(text: string, params: unknown[] = []) => (await db.query(text, params)).rows as T[]
const count = async (table: string) => Number((await query<{ n: string }>(`select count(*) as n from ${table}`))[0]!.n)

/** An organization with an endpoint, and `n` deliveries to it, each scheduled (one with a failed attempt). */
async function organizationWithDeliveries(name: string, n: number) {
  const [org] = await query<{ id: string }>('insert into organizations (name) values ($1) returning id', [name])
  const [endpoint] = await query<{ id: string }>(
    `insert into webhook_endpoints (organization_id, url, signing_secret, event_types)
     values ($1, 'http://127.0.0.1:9/hook', 'whsec_keys', '{product.recalled}') returning id`,
    [org!.id],
  )
  const deliveries = await query<{ id: string }>(
    `with delivery as (
       insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type)
       select $1, $2, gen_random_uuid(), 'product.recalled' from generate_series(1, $3)
       returning id, endpoint_id, organization_id, event_id)
     insert into webhook_pending_deliveries (delivery_id, endpoint_id, organization_id, event_id, next_attempt_at)
     select id, endpoint_id, organization_id, event_id, now() from delivery returning delivery_id as id`,
    [org!.id, endpoint!.id, n],
  )
  await query(
    `insert into webhook_attempts (delivery_id, attempt, response_status, latency_ms, error)
     values ($1, 1, 500, 3, 'HTTP 500')`,
    [deliveries[0]!.id],
  )
  return { organization: org!.id, endpoint: endpoint!.id, deliveries: deliveries.map((d) => d.id) }
}

test("deleting an organization deletes its endpoints' deliveries, their schedule rows and attempts; another's stay", async () => {
  const gone = await organizationWithDeliveries('Gone', 3)
  const kept = await organizationWithDeliveries('Kept', 2)
  expect(await count('webhook_deliveries')).toBe(5)
  expect(await count('webhook_pending_deliveries')).toBe(5)
  expect(await count('webhook_attempts')).toBe(2)

  await query('delete from organizations where id = $1', [gone.organization])

  const left = await query<{ id: string }>('select id from webhook_deliveries order by id')
  expect(left.map((r) => r.id)).toEqual([...kept.deliveries].sort())
  const scheduled = await query<{ delivery_id: string }>(
    'select delivery_id from webhook_pending_deliveries order by delivery_id',
  )
  expect(scheduled.map((r) => r.delivery_id)).toEqual([...kept.deliveries].sort())
  expect(await query('select delivery_id from webhook_attempts')).toEqual([{ delivery_id: kept.deliveries[0] }])
})

test('deleting deliveries deletes their schedule rows', async () => {
  const { deliveries } = await organizationWithDeliveries('Deliveries', 3)
  await query('delete from webhook_deliveries where id = any($1::uuid[])', [deliveries.slice(0, 2)])
  const scheduled = await query<{ delivery_id: string }>(
    'select delivery_id from webhook_pending_deliveries where delivery_id = any($1::uuid[])',
    [deliveries],
  )
  expect(scheduled).toEqual([{ delivery_id: deliveries[2]! }])
})
