import { describe, expect, test } from 'bun:test'
import { pool } from '../../../src/db/client'
import { eventually } from '../../support/eventually'
import { sql } from '../../support/fixtures'

// A connection PostgreSQL ends while the service holds it between statements (a transaction, a
// claim's round trip): pg-pool listens for errors only on idle clients, so before every client had
// a listener of its own the 'error' event had none and ended the process (the outage test saw the
// server crash when PostgreSQL stopped). Here the backend of a checked-out client is terminated.
describe('a connection lost while checked out', () => {
  test('does not end the process: its next statement fails, and the pool goes on with a new one', async () => {
    const client = await pool.connect()
    const [{ pid }] = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows as [{ pid: number }]
    const [ended] = await sql<{ ended: boolean }>('select pg_terminate_backend($1) as ended', [pid])
    expect(ended!.ended).toBe(true)
    // the client has heard of it (its connection is gone) and this process is still here
    await eventually(async () => {
      const [row] = await sql<{ n: number }>('select count(*)::int n from pg_stat_activity where pid = $1', [pid])
      return row!.n === 0
    })
    await expect(client.query('select 1')).rejects.toThrow()
    client.release(true)
    const { rows } = await pool.query<{ one: number }>('select 1 as one')
    expect(rows).toEqual([{ one: 1 }])
  })
})
