import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, run, start, waitForHealth } from '../support/process'

// The README's first commands, for real: `npm run -s cli -- org create …` on a fresh DATA_DIR
// (embedded PostgreSQL started and stopped by the CLI), then `npm start` on the same DATA_DIR,
// then the members list with the printed key. Finally SIGTERM stops the server and its database.
const dataDir = mkdtempSync(join(tmpdir(), 'gtin-quickstart-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('quick start (contract §1)', () => {
  test('cli org create prints one JSON line; npm start serves it; SIGTERM shuts down cleanly', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'info' }
    const cli = await run(
      ['npm', 'run', '-s', 'cli', '--', 'org', 'create', '--name', 'Acme', '--owner-email', 'owner@acme.test', '--owner-name', 'Ann', '--gs1-prefix', '0614141', '--json'],
      env,
    )
    expect(cli.code).toBe(0)
    const lines = cli.output.trim().split('\n')
    expect(lines).toHaveLength(1)
    const printed = JSON.parse(lines[0]!)
    expect(Object.keys(printed)).toEqual(['organization_id', 'api_key', 'role'])
    expect(printed.role).toBe('manager')
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false) // the CLI stopped what it started

    const port = await freePort()
    const server = start(['npm', 'start'], { ...env, PORT: String(port), HOST: '127.0.0.1' })
    try {
      const url = `http://127.0.0.1:${port}`
      await waitForHealth(url)
      const res = await fetch(`${url}/account/api/v1/organizations/${printed.organization_id}/members`, {
        headers: { 'x-api-key': printed.api_key },
      })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { data: { user_email: string; user_name: string; role: string }[] }
      expect(body.data).toHaveLength(1)
      expect(body.data[0]).toMatchObject({ user_email: 'owner@acme.test', user_name: 'Ann', role: 'owner' })

      // While the server runs, the CLI joins its database instead of starting a second one.
      const second = await run(['npm', 'run', '-s', 'cli', '--', 'org', 'create', '--name', 'Beta', '--owner-email', 'b@beta.test', '--json'], env)
      expect(second.code).toBe(0)
      expect(JSON.parse(second.output.trim()).organization_id).toMatch(/^[2-9A-HJ-NP-Za-km-z]{22}$/)
    } finally {
      server.kill('SIGTERM')
    }
    await server.exited // npm itself ends by the signal; the server logs its own clean stop
    expect(server.output()).toContain('shutting down')
    expect(server.output()).toContain('"msg":"stopped"')
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false) // embedded database stopped
  }, 90_000)
})
