import { afterAll, beforeAll, expect, test } from 'bun:test'
import pg from 'pg'
import { inTransactionsOfOneRoundTrip, literal } from '../../../src/webhooks/round-trip'
import { eventually, sql, unique } from '../../support/fixtures'
import { databaseUrl } from '../../support/server'

// The dispatcher settles a batch of successes and claims the slots it freed in one round trip of
// two transactions (dispatcher.ts settleAndClaim): the settle must commit before the claim waits
// for the claim lock, or a settle would hold its rows (and its freed slots would stay taken) for
// as long as another process's claim holds that lock.
const table = unique('round_trip').replaceAll('-', '_')
const LOCK = 727_901 // an advisory lock of this file's own

beforeAll(async () => {
  await sql(`create table ${table} (n int)`)
})

afterAll(async () => {
  await sql(`drop table if exists ${table}`)
})

const rowsIn = async () => (await sql<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n

test('the first transaction of a round trip is committed while the second waits for a lock', async () => {
  const holder = new pg.Client({ connectionString: databaseUrl })
  await holder.connect()
  try {
    await holder.query('begin')
    await holder.query(`select pg_advisory_xact_lock(${LOCK})`)
    const running = inTransactionsOfOneRoundTrip<{ n: number }>(
      [`insert into ${table} values (1)`],
      [`select pg_advisory_xact_lock(${LOCK})`, `select count(*)::int as n from ${table}`],
    )
    // the round trip's second transaction is waiting for the lock the holder has
    await eventually(
      async () =>
        (
          await sql(
            `select 1 from pg_stat_activity
             where wait_event_type = 'Lock' and wait_event = 'advisory' and query like $1`,
            [`%insert into ${table}%`],
          )
        ).length === 1,
      20_000,
      'the round trip to wait for the advisory lock',
    )
    // and its first has committed: another connection sees its row
    expect(await rowsIn()).toBe(1)
    await holder.query('commit')
    const [inserted, counted] = await running
    expect(inserted).toEqual([])
    expect(counted).toEqual([{ n: 1 }])
  } finally {
    await holder.end()
  }
})

test('a failing second transaction keeps the first and undoes its own', async () => {
  const before = await rowsIn()
  await expect(
    inTransactionsOfOneRoundTrip(
      [`insert into ${table} values (2)`],
      [`insert into ${table} values (3)`, 'select 1/0'],
    ),
  ).rejects.toThrow('division by zero')
  expect(await rowsIn()).toBe(before + 1)
  expect(await sql(`select n from ${table} where n in (2, 3) order by n`)).toEqual([{ n: 2 }])
})

test("a literal is written as pg's escapeLiteral writes it", () => {
  for (const text of ['{a,b}', "it's", 'back\\slash', "both ' and \\", '', '{2026-11-27T14:41:17.000Z}'])
    expect(literal(text)).toBe(pg.escapeLiteral(text))
})
