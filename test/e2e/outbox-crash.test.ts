import { afterAll, describe, expect, test } from 'bun:test'
import { drained, eventually } from '../support/eventually'
import { sql } from '../support/fixtures'
import { start } from '../support/process'
import { databaseUrl } from '../support/server'

// The outbox across a crash: a worker process (test/support/event-worker.ts, the service's
// features plus two consumers that log each event they see) is killed with SIGKILL while its
// events are being dispatched; after a restart each consumer has seen every event exactly once.
describe('crash safety', () => {
  const name = `outbox_crash_${Date.now()}`
  afterAll(() => sql(`drop database if exists ${name} with (force)`))

  test('a worker killed mid-dispatch: after a restart every event reaches both consumers, once', async () => {
    await sql(`create database ${name}`)
    const url = new URL(databaseUrl)
    url.pathname = `/${name}`
    const pg = (await import('pg')).default
    const own = new pg.Client({ connectionString: url.href })
    await own.connect()
    await own.query('create table test_event_log (consumer text not null, event_id uuid not null)')
    const env = { DATABASE_URL: url.href, LOG_LEVEL: 'warn' }
    const worker = ['test/support/event-worker.ts']
    const first = start([process.execPath, ...worker], { ...env, EMIT: '1000' })
    await eventually(() => first.output().includes('emitted'), 60_000, 'the first worker to emit')
    first.kill('SIGKILL')
    await first.exited
    const logged = async () => (await own.query<{ n: number }>('select count(*)::int n from test_event_log')).rows[0]!.n
    const atKill = await logged()
    expect(atKill).toBeLessThan(2000) // killed before it had finished

    const second = start([process.execPath, ...worker], env)
    try {
      await eventually(async () => (await logged()) >= 2000, 90_000, 'every event in the log after the restart')
      // nothing left to run or due in the two consumers' queues: no duplicate can follow
      await drained(['crash.a', 'crash.b'], async (text, params) => (await own.query(text, params)).rows, {
        dueWithin: 5_000,
      })
      const { rows } = await own.query<{ consumer: string; n: number; events: number }>(
        'select consumer, count(*)::int n, count(distinct event_id)::int events from test_event_log group by consumer order by consumer',
      )
      expect(rows).toEqual([
        { consumer: 'crash.a', n: 1000, events: 1000 },
        { consumer: 'crash.b', n: 1000, events: 1000 },
      ])
    } finally {
      second.kill('SIGKILL')
      await second.exited
      await own.end()
    }
  }, 180_000)
})
