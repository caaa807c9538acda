import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { isRunning } from '../../src/db/processes'
import { postmastersOf, tempDir } from '../support/cluster'
import { eventually, ORGS } from '../support/fixtures'
import { startServer } from '../support/process'

// Issue 44, finding 7: the embedded PostgreSQL is supervised. When its postmaster dies under a
// running server, the server restarts it (with back-off), logs why with PostgreSQL's own last
// lines, and serves again; it stops the cluster with itself.

const ADMIN_TOKEN = 'supervision-admin-token-0123456789'
const dir = tempDir('supervised')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Line = { level: number; msg?: string; [k: string]: unknown }
const lines = (output: string): Line[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))

describe('embedded PostgreSQL supervision', () => {
  test('a postmaster killed under the running server is restarted; requests succeed again; it stops with the server', async () => {
    const pgDir = join(dir, 'pg')
    const server = await startServer({ DATA_DIR: dir, DATABASE_URL: '', ADMIN_TOKEN, LOG_LEVEL: 'info' })
    try {
      const created = await fetch(`${server.url}${ORGS}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': ADMIN_TOKEN },
        body: JSON.stringify({ name: 'Supervised', owner_email: 'owner@supervised.test' }),
      })
      expect(created.status).toBe(201)
      const { organization, api_key } = (await created.json()) as {
        organization: { id: string }
        api_key: { key: string }
      }
      const members = () =>
        fetch(`${server.url}${ORGS}/${organization.id}/members`, { headers: { 'x-api-key': api_key.key } })

      for (let round = 1; round <= 2; round++) {
        const [killed] = postmastersOf(pgDir)
        expect(killed?.parent).toBe(server.proc.pid!)
        process.kill(killed!.pid, 'SIGKILL')
        // back: a new postmaster, the server's child, and the data it had
        const restarted = await eventually(async () => {
          const now = postmastersOf(pgDir)
          return now.length === 1 && now[0]!.pid !== killed!.pid && (await members()).status === 200 ? now[0]! : null
        }, 60_000)
        expect(restarted.parent).toBe(server.proc.pid!)
        expect(isRunning(killed!.pid)).toBe(false)
        const body = (await (await members()).json()) as { data: { user_email: string }[] }
        expect(body.data.map((m) => m.user_email)).toEqual(['owner@supervised.test'])
        expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
        const said = lines(server.output())
        const exits = said.filter((l) =>
          l.msg?.startsWith('the embedded PostgreSQL was ended by SIGKILL; restarting it'),
        )
        expect(exits).toHaveLength(round)
        // why, in PostgreSQL's own words: its last lines come with the log line
        expect((exits[round - 1]!.output as string[]).some((l) => l.includes('ready to accept connections'))).toBe(true)
        expect(said.filter((l) => l.msg === 'the embedded PostgreSQL is running again')).toHaveLength(round)
      }
      const [last] = postmastersOf(pgDir)
      server.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      expect(isRunning(last!.pid)).toBe(false)
      expect(existsSync(join(pgDir, 'postmaster.pid'))).toBe(false)
      expect(existsSync(join(dir, 'server.pid'))).toBe(false)
    } finally {
      server.kill('SIGKILL')
      await server.exited
    }
  }, 150_000)
})
