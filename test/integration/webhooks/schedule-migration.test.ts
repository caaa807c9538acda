import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { toShortId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
import { ADMIN } from '../../support/fixtures'
import { MIGRATIONS, ownDatabase } from '../../support/own-database'
import { startServer } from '../../support/process'
import { startReceiver } from '../../support/receiver'

// Migration 0033 moved a delivery's schedule and lease off its row (webhook_pending_deliveries,
// webhook_leases). Deliveries written by the schema before it must still go out: a database is
// migrated up to the migration before, given deliveries as the old code wrote them (scheduled,
// in flight, waiting for a switched-off endpoint, settled), then a service migrates it and runs.
const database = ownDatabase('hooks_schedule')
const receiver = startReceiver()
const before = mkdtempSync(join(tmpdir(), 'migrations-before-0033-'))
let db: pg.Client
let server: Awaited<ReturnType<typeof startServer>> | null = null

beforeAll(async () => {
  await database.create()
  // the migrations as they were before 0033
  cpSync(MIGRATIONS, before, { recursive: true })
  const journalFile = join(before, 'meta', '_journal.json')
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] }
  journal.entries = journal.entries.filter((e) => e.tag < '0033')
  writeFileSync(journalFile, JSON.stringify(journal))
  db = await database.migrated(before)
}, 60_000)

afterAll(async () => {
  receiver.stop()
  server?.kill('SIGTERM')
  await server?.exited
  await db?.end()
  await database.drop()
  rmSync(before, { recursive: true, force: true })
})

const query = async <T>(text: string, params: unknown[] = []) => (await db.query(text, params)).rows as T[]

test('deliveries scheduled before migration 0033 go out after it; waiting and settled ones stay as they were', async () => {
  const [org] = await query<{ id: string }>(`insert into organizations (name) values ('Before 0033') returning id`)
  const endpoint = async (url: string, active: boolean) =>
    (
      await query<{ id: string }>(
        `insert into webhook_endpoints (organization_id, url, signing_secret, event_types, is_active)
         values ($1, $2, 'whsec_before_0033', '{product.recalled}', $3) returning id`,
        [org!.id, url, active],
      )
    )[0]!.id
  const on = await endpoint(`${receiver.url}/on`, true)
  const off = await endpoint(`${receiver.url}/off`, false)
  // old rows: scheduled (a token, due), in flight (its lease running), waiting (no token), settled
  const delivery = async (endpointId: string, status: string, token: boolean, lease: boolean) => {
    const [event] = await query<{ id: string }>(
      `insert into events (id, event_type, organization_id, subject_id, data)
       values (gen_random_uuid(), 'product.recalled', $1, gen_random_uuid(), '{"n": 1}') returning id`,
      [org!.id],
    )
    await query(
      `insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type, status, job_token,
         next_attempt_at, lease_until)
       values ($1, $2, $3, 'product.recalled', $4, case when $5 then gen_random_uuid() end,
         case when $5 then now() - interval '1 second' end, case when $6 then now() + interval '1 hour' end)`,
      [org!.id, endpointId, event!.id, status, token, lease],
    )
    return event!.id
  }
  const scheduled = await delivery(on, 'pending', true, false)
  const retrying = await delivery(on, 'retrying', true, true)
  const waiting = await delivery(off, 'pending', false, false)
  const settled = await delivery(on, 'succeeded', false, false)

  server = await startServer({
    DATABASE_URL: database.url,
    APP_ENV: 'development',
    NODE_ENV: 'development',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'warn',
  })
  // the receiver sees short ids; the database full ones
  const fullIds = new Map([scheduled, retrying, waiting, settled].map((id) => [toShortId(id), id]))
  const received = (eventId: string) =>
    receiver.received.filter((r) => r.event && fullIds.get(r.event.id) === eventId).length
  // the scheduled one and the leased one (its old lease is not carried over) go out, and settle
  await eventually(
    async () =>
      received(scheduled) > 0 &&
      received(retrying) > 0 &&
      (
        await query<{ n: number }>(
          `select count(*)::int n from webhook_deliveries where event_id = any($1::uuid[]) and status = 'succeeded'`,
          [[scheduled, retrying]],
        )
      )[0]!.n === 2,
    30_000,
    'the deliveries scheduled before 0033 to go out',
  )
  const rows = await query<{ event_id: string; status: string; next_attempt_at: Date | null; pending: boolean }>(
    `select d.event_id, d.status, p.next_attempt_at, p.delivery_id is not null as pending
     from webhook_deliveries d left join webhook_pending_deliveries p on p.delivery_id = d.id
     where d.organization_id = $1`,
    [org!.id],
  )
  const of = (eventId: string) => rows.find((r) => r.event_id === eventId)!
  expect(of(scheduled)).toMatchObject({ status: 'succeeded', pending: false })
  // waiting for its endpoint to be switched on: still to go out, with no next attempt
  expect(of(waiting)).toMatchObject({ status: 'pending', pending: true, next_attempt_at: null })
  expect(of(settled)).toMatchObject({ status: 'succeeded', pending: false })
  expect(received(waiting)).toBe(0)
  expect(received(settled)).toBe(0)
}, 90_000)
