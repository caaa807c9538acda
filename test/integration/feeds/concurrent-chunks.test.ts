import { describe, expect, test } from 'bun:test'
import { sql as dsql } from 'drizzle-orm'
import { db } from '../../../src/db/client'
import { feedRunChunks, feedRuns, NIL_SCOPE } from '../../../src/db/schema'
import { transaction } from '../../../src/db/tx'
import { writeChunk } from '../../../src/feeds/chunks'
import { eventually } from '../../support/eventually'
import { sql, uniqueGtin } from '../../support/fixtures'

/** A platform run of Open Food Facts whose one chunk holds these records (no job: the test writes it). */
async function runWithChunk(gtins: string[], poisoned: (n: number) => boolean = () => false, name = 'Concurrent') {
  const [run] = await db
    .insert(feedRuns)
    .values({ source: 'off', format: 'off_jsonl', file: 'concurrent.jsonl', path: '/nowhere/concurrent.jsonl' })
    .returning({ id: feedRuns.id })
  await db.insert(feedRunChunks).values({
    runId: run!.id,
    chunk: 1,
    payload: JSON.stringify(
      gtins.map((gtin14, n) => ({
        gtin14,
        reading: 'ean13',
        // a version past bigint's range: refused by the feed records' column, so the chunk is bisected
        version: poisoned(n) ? 1e20 : 1,
        fields: { product_name: `${name} Oats ${n}` },
        line: n + 1,
      })),
    ),
    read: gtins.length,
  })
  return run!.id
}

/** Whether some backend waits for the transaction of backend `pid` (a row or index entry it wrote and holds). */
const someoneWaitsFor = async (pid: number) =>
  (await sql(`select 1 from pg_stat_activity where $1::int = any(pg_blocking_pids(pid))`, [pid])).length > 0

// New products, their feed records and search marks are inserted plainly (no ON CONFLICT): the chunk
// read them as absent. When a concurrent chunk of another run made the same products first, the
// plain insert meets its rows (23505) and the chunk writes them as existing ones instead.
describe('two runs writing the same new products at once', () => {
  test('the second chunk waits for the first, then finds the products and records made and ends right', async () => {
    const gtins = [`0${uniqueGtin()}`, `0${uniqueGtin()}`].sort()
    const [first, second] = [await runWithChunk(gtins), await runWithChunk(gtins)]
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let firstWritten!: () => void
    const written = new Promise<void>((resolve) => {
      firstWritten = resolve
    })
    // the first chunk writes and holds its transaction open until the second waits for it
    let firstPid = 0
    const a = transaction(async (tx) => {
      await writeChunk(tx, first, 1)
      firstPid = (await tx.execute<{ pid: number }>(dsql`select pg_backend_pid() as pid`)).rows[0]!.pid
      firstWritten()
      await held
    })
    await written
    const b = transaction((tx) => writeChunk(tx, second, 1))
    await eventually(() => someoneWaitsFor(firstPid), 20_000, 'the second chunk to wait for the first')
    release()
    await a
    expect(await b).toBe(true)

    const products = await sql<{ id: string; gtin: string; product_name: string }>(
      'select id, gtin, product_name from products where gtin = any($1) order by gtin',
      [gtins],
    )
    expect(products.map((p) => p.gtin)).toEqual(gtins)
    expect(products.map((p) => p.product_name)).toEqual(['Concurrent Oats 0', 'Concurrent Oats 1'])
    // one feed record per key (the runner's), last seen by the second run
    const records = await sql<{ key: string; last_run_id: string; product_id: string }>(
      'select key, last_run_id, product_id from feed_records where key = any($1) order by key',
      [gtins],
    )
    expect(records).toEqual(
      products.map((p) => ({ key: p.gtin, last_run_id: second, product_id: p.id })) as typeof records,
    )
    // the second run's statement replaced the first's (the same runner and source): one each
    const statements = await sql<{ n: number }>(
      'select count(*)::int as n from product_candidates where product_id = any($1::uuid[])',
      [products.map((p) => p.id)],
    )
    expect(statements[0]!.n).toBe(2)
    const chunks = await sql<{ run_id: string; status: string; created: number; updated: number; rejected: number }>(
      'select run_id, status, created, updated, rejected from feed_run_chunks where run_id = any($1::uuid[])',
      [[first, second]],
    )
    expect(chunks.find((c) => c.run_id === first)).toMatchObject({
      status: 'done',
      created: 2,
      updated: 0,
      rejected: 0,
    })
    expect(chunks.find((c) => c.run_id === second)).toMatchObject({
      status: 'done',
      created: 0,
      updated: 2,
      rejected: 0,
    })
  })
})

describe('a chunk bisected around refused records', () => {
  test('its halves write without a savepoint of their own each: the subtransactions stay in the cache', async () => {
    // 8 refused records spread over 256: about 40 halves written (each a savepoint); with the plain
    // inserts' two savepoints more each they were about 120, past PostgreSQL's 64 cached per backend
    const gtins = Array.from({ length: 256 }, () => `0${uniqueGtin()}`).sort()
    const run = await runWithChunk(gtins, (n) => n % 32 === 5)
    const state = await transaction(async (tx) => {
      await writeChunk(tx, run, 1)
      const [subxact] = (
        await tx.execute<{ subxact_count: number; subxact_overflowed: boolean }>(dsql`
          select (pg_stat_get_backend_subxact(b)).* from pg_stat_get_backend_idset() b
          where pg_stat_get_backend_pid(b) = pg_backend_pid()`)
      ).rows
      return subxact!
    })
    expect(state.subxact_overflowed).toBe(false)
    expect(state.subxact_count).toBeLessThan(64)
    const [chunk] = await sql<{ created: number; rejected: number }>(
      'select created, rejected from feed_run_chunks where run_id = $1',
      [run],
    )
    expect(chunk).toEqual({ created: 248, rejected: 8 })
    const made = await sql<{ n: number }>('select count(*)::int as n from products where gtin = any($1)', [gtins])
    expect(made[0]!.n).toBe(248)
  }, 60_000)
})

// A chunk's feed records are written in key order in one statement when some of its keys were
// recorded before and some not. Written as two statements (the known keys' upsert, then the new
// keys' insert), a chunk locked a later key before an earlier one; a writer of the same records
// taking them in key order then deadlocked with it (40P01, the chunk retried whole).
describe('feed records known and new in one chunk', () => {
  test('are written in key order: a writer holding an earlier key and then taking a later one does not deadlock', async () => {
    const [earlier, later] = [`0${uniqueGtin()}`, `0${uniqueGtin()}`].sort()
    // the later key recorded by an earlier run of the runner; the earlier one not yet
    const first = await runWithChunk([later!])
    expect(await transaction((tx) => writeChunk(tx, first, 1))).toBe(true)
    const [record] = await sql<{ product_id: string }>(`select product_id from feed_records where key = $1`, [later])
    const run = await runWithChunk([earlier!, later!], () => false, 'Renamed')
    // another writer records the earlier key and holds it, uncommitted
    const other = await db.$client.connect()
    try {
      await other.query('begin')
      const { rows } = await other.query<{ pid: number }>('select pg_backend_pid() as pid')
      await other.query(
        `insert into feed_records (source, scope, contributor_id, key, gtin, product_id, content_hash, reading, last_run_id)
         values ('open_food_facts', $1::uuid, $1::uuid, $2::text, $2::text, $3::uuid, 'other', 'ean13', gen_random_uuid())`,
        [NIL_SCOPE, earlier, record!.product_id],
      )
      const chunk = transaction((tx) => writeChunk(tx, run, 1)).then(
        () => 'written',
        // a query error's SQLSTATE is its cause's (40P01: a deadlock)
        (err: { code?: string; cause?: { code?: string } }) => err.cause?.code ?? err.code ?? String(err),
      )
      await eventually(() => someoneWaitsFor(rows[0]!.pid), 20_000, 'the chunk to wait for the earlier key')
      // then it takes the later key, as a writer in key order does
      await other.query(`set local lock_timeout = '10s'`)
      await other.query(`update feed_records set content_hash = 'other' where key = $1`, [later])
      await other.query('commit')
      expect(await chunk).toBe('written')
    } finally {
      other.release()
    }
    const records = await sql<{ key: string; last_run_id: string }>(
      'select key, last_run_id from feed_records where key = any($1) order by key',
      [[earlier, later]],
    )
    expect(records).toEqual([
      { key: earlier!, last_run_id: run },
      { key: later!, last_run_id: run },
    ])
  }, 60_000)
})
