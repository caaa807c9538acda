import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually } from '../support/eventually'
import { freePort, run, start, startServer, waitForHealth } from '../support/process'

// The README's first commands, for real: `npm run -s cli -- org create …` on a fresh DATA_DIR
// (embedded PostgreSQL started and stopped by the CLI), then `npm start` on the same DATA_DIR,
// then the members list with the printed key. Finally SIGTERM stops the server and its database.
const dataDir = mkdtempSync(join(tmpdir(), 'gtin-quickstart-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('quick start (contract §1)', () => {
  test('cli org create prints one JSON line; npm start serves it; SIGTERM shuts down cleanly', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'info' }
    const cli = await run(
      [
        'npm',
        'run',
        '-s',
        'cli',
        '--',
        'org',
        'create',
        '--name',
        'Acme',
        '--owner-email',
        'owner@acme.test',
        '--owner-name',
        'Ann',
        '--gs1-prefix',
        '0614141',
        '--json',
      ],
      env,
    )
    expect(cli.code).toBe(0)
    // one JSON line on stdout; logs, if any, go to stderr (shown here when the check fails)
    const lines = cli.stdout.trim().split('\n')
    if (lines.length !== 1) console.error('CLI output (stdout and stderr):', cli.output)
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
      const second = await run(
        ['npm', 'run', '-s', 'cli', '--', 'org', 'create', '--name', 'Beta', '--owner-email', 'b@beta.test', '--json'],
        env,
      )
      expect(second.code).toBe(0)
      expect(JSON.parse(second.stdout.trim()).organization_id).toMatch(/^[2-9A-HJ-NP-Za-km-z]{22}$/)
    } finally {
      server.kill('SIGTERM')
    }
    await server.exited
    expect(server.output()).toContain('shutting down')
    // npm relays the server's output and ends at the signal itself; the server goes on to stop
    // its embedded database, which removes postmaster.pid.
    await eventually(() => !existsSync(join(dataDir, 'pg', 'postmaster.pid')), 15_000, 'the embedded database to stop')
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false)
  }, 90_000)

  test('SIGTERM: stops accepting, stops workers and the embedded database, exits 0; data survives a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gtin-shutdown-'))
    try {
      const env = { DATA_DIR: dir, DATABASE_URL: '', ADMIN_TOKEN: 'shutdown-admin-token-123' }
      const first = await startServer(env)
      const created = await fetch(`${first.url}/account/api/v1/organizations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': env.ADMIN_TOKEN },
        body: JSON.stringify({ name: 'Durable', owner_email: 'd@durable.test' }),
      })
      expect(created.status).toBe(201)
      const { organization, api_key } = (await created.json()) as {
        organization: { id: string }
        api_key: { key: string }
      }
      await fetch(`${first.url}/no/such/path`, { headers: { 'x-request-id': 'trace-404' } })
      await fetch(`${first.url}/readyz`, { headers: { 'x-request-id': 'trace-200' } })
      // scans are served from Bun's router, outside the app's hooks: logged all the same (a bad check digit: 400)
      await fetch(`${first.url}/01/04012345000019`, { headers: { 'x-request-id': 'trace-scan' } })
      first.kill('SIGTERM')
      expect(await first.exited).toBe(0)
      // one structured JSON line per request: request id, method, path, status, duration
      const lines = first
        .output()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      expect(lines.find((l) => l.request_id === 'trace-404')).toMatchObject({
        method: 'GET',
        path: '/no/such/path',
        status: 404,
      })
      expect(lines.find((l) => l.request_id === 'trace-200')).toMatchObject({
        method: 'GET',
        path: '/readyz',
        status: 200,
      })
      expect(typeof lines.find((l) => l.request_id === 'trace-200').duration_ms).toBe('number')
      expect(lines.find((l) => l.request_id === 'trace-scan')).toMatchObject({
        method: 'GET',
        path: '/01/04012345000019',
        status: 400,
      })
      expect(first.output()).not.toContain(api_key.key) // keys never logged
      expect(first.output()).toContain('"msg":"stopped"')
      expect(existsSync(join(dir, 'pg', 'postmaster.pid'))).toBe(false)
      expect(fetch(`${first.url}/healthz`)).rejects.toThrow()

      const second = await startServer(env)
      try {
        const res = await fetch(`${second.url}/account/api/v1/organizations/${organization.id}/members`, {
          headers: { 'x-api-key': api_key.key },
        })
        expect(res.status).toBe(200)
        expect(((await res.json()) as { data: { user_email: string }[] }).data[0]!.user_email).toBe('d@durable.test')
      } finally {
        second.kill('SIGTERM')
        await second.exited
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)
})
