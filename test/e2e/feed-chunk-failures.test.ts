import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { eventually } from '../support/eventually'
import { ADMIN } from '../support/fixtures'
import { ownDatabase } from '../support/own-database'
import { startServer } from '../support/process'

// Issue 45, "poison never spreads" for what is not a record's fault: a chunk that fails as a whole
// (the database refuses it, or its worker is killed on every attempt) is tried three times, then its
// run fails with the reason, the other chunks' writes kept and nothing of that chunk half-written;
// no run is left `running` with nothing in flight. On a database and service of their own: the
// failures are injected by a trigger.
const ROWS = 500
const CHUNK = 100
const feedDir = mkdtempSync(join(tmpdir(), 'feeds-failing-'))
const database = ownDatabase('feeds_failing')
let server: Awaited<ReturnType<typeof startServer>>
let db: pg.Client

const gtinOf = (i: number) => {
  const body = `762${String(i).padStart(9, '0')}`
  return `0${body}${gs1CheckDigit(body)}`
}

beforeAll(async () => {
  const lines = Array.from({ length: ROWS }, (_, i) =>
    JSON.stringify({ code: gtinOf(i).slice(1), product_name: `Failing Product ${i}` }),
  )
  writeFileSync(join(feedDir, 'five-chunks.jsonl'), `${lines.join('\n')}\n`)
  await database.create()
  server = await serve()
  db = new pg.Client({ connectionString: database.url })
  await db.connect()
}, 60_000)

afterAll(async () => {
  server.kill('SIGKILL')
  await server.exited
  await db.end()
  await database.drop()
  rmSync(feedDir, { recursive: true, force: true })
})

function serve() {
  return startServer({
    DATABASE_URL: database.url,
    FEED_DIR: feedDir,
    FEED_CHUNK_ROWS: String(CHUNK),
    FEED_CHUNK_CONCURRENCY: '1',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'error',
  })
}

async function startRun() {
  const res = await fetch(`${server.url}/feeds/api/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ source: 'off', path: 'five-chunks.jsonl' }),
  })
  expect(res.status).toBe(202)
  return ((await res.json()) as { id: string }).id
}

const runOf = async (id: string) =>
  (await (await fetch(`${server.url}/feeds/api/v1/runs/${id}`, { headers: ADMIN })).json()) as any
const ended = (id: string) =>
  eventually(async () => {
    const run = await runOf(id)
    return run.status === 'failed' || run.status === 'succeeded' ? run : null
  }, 120_000)

/** The third chunk's rows (lines 201-300) are refused by the database with `code`, or made to sleep. */
async function injectInChunkThree(body: string) {
  await db.query(`create or replace function inject_chunk_three() returns trigger language plpgsql as $$
    begin
      if new.gtin between '${gtinOf(2 * CHUNK)}' and '${gtinOf(3 * CHUNK - 1)}' then ${body}; end if;
      return new;
    end $$`)
  await db.query('drop trigger if exists inject_chunk_three on feed_records')
  await db.query(
    'create trigger inject_chunk_three before insert on feed_records for each row execute function inject_chunk_three()',
  )
}

const productsIn = async (from: number, to: number) =>
  Number(
    (
      await db.query('select count(*)::int n from products where gtin between $1 and $2', [
        gtinOf(from),
        gtinOf(to - 1),
      ])
    ).rows[0].n,
  )

describe('a chunk that fails as a whole', () => {
  test('three times by the database: the run fails with the reason, the others’ writes kept', async () => {
    // a serialization failure is not the records' fault: the chunk is retried as a whole
    await injectInChunkThree(`raise exception 'injected' using errcode = '40001'`)
    const id = await startRun()
    const run = await ended(id)
    expect(run.status).toBe('failed')
    expect(run.error).toBe('chunk 3 failed after 2 retries: a database error (SQLSTATE 40001)')
    // the chunks written before the failure keep their counts and products; chunk 3 wrote nothing
    expect(run.counts.rejected).toBe(0)
    expect(run.counts.created).toBe(await productsIn(0, ROWS))
    expect(run.counts.created).toBeGreaterThanOrEqual(2 * CHUNK)
    expect(await productsIn(2 * CHUNK, 3 * CHUNK)).toBe(0)
    // pg-boss records the job's last failure just after the handler failed the run
    const runId = (await db.query('select id from feed_runs order by created desc limit 1')).rows[0].id
    const attempts = await eventually(async () => {
      const r = await db.query(
        `select retry_count, state from pgboss.job where name = 'feeds.chunk' and data->>'runId' = $1 and data->>'chunk' = '3'`,
        [runId],
      )
      return r.rows[0]?.state === 'failed' ? r.rows : null
    }, 30_000)
    expect(attempts).toEqual([{ retry_count: 2, state: 'failed' }])
    const running = await db.query(`select count(*)::int n from feed_runs where status in ('queued', 'running')`)
    expect(running.rows[0].n).toBe(0)
  }, 180_000)

  test('its worker killed on every attempt: the dead letter fails the run', async () => {
    await db.query('delete from products')
    await injectInChunkThree('perform pg_sleep(600)')
    const id = await startRun()
    for (let attempt = 0; attempt < 3; attempt++) {
      // the worker is inside chunk 3: kill it, and end its session's sleep (the database would
      // notice the closed connection only when the sleep ends)
      await eventually(async () => {
        const r = await db.query(
          `select pid from pg_stat_activity where query like '%feed_records%' and wait_event = 'PgSleep'`,
        )
        return r.rows.length > 0
      }, 150_000)
      server.kill('SIGKILL')
      await server.exited
      await db.query(`select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep'`)
      server = await serve()
    }
    const run = await ended(id)
    expect(run.status).toBe('failed')
    expect(run.error).toBe(
      'chunk 3 was not written after 3 attempts (its worker stopped or the database failed each time)',
    )
    expect(await productsIn(2 * CHUNK, 3 * CHUNK)).toBe(0)
    const running = await db.query(`select count(*)::int n from feed_runs where status in ('queued', 'running')`)
    expect(running.rows[0].n).toBe(0)
  }, 600_000)
})
