import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BATCH, batchItems, waitForBatch } from '../support/batches'
import { eventually } from '../support/eventually'
import { startServer } from '../support/process'
import { readZip } from '../support/zip'

const ADMIN_TOKEN = 'crash-admin-token-0123456789'

describe('batch export survives a killed worker', () => {
  test('SIGKILL mid-batch: after restart the job is retried to a complete, non-duplicated result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gtin-batch-crash-'))
    const env = { DATA_DIR: dir, DATABASE_URL: '', ADMIN_TOKEN, LOG_LEVEL: 'warn' }
    try {
      const first = await startServer(env)
      const org = await fetch(`${first.url}/account/api/v1/organizations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': ADMIN_TOKEN },
        body: JSON.stringify({ name: 'Print Shop', owner_email: 'ops@print.test' }),
      }).then((r) => r.json() as Promise<{ api_key: { key: string } }>)
      const key = org.api_key.key
      const items = batchItems(2000, 9)
      const created = await fetch(first.url + BATCH, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ items, output: 'zip', format: 'png' }),
      }).then((r) => r.json() as Promise<{ id: string }>)

      // kill the server process (API and worker; its database keeps running) once the batch is under way
      // (a batch that succeeded first ends the wait too, to fail the assertion below)
      const underWay = await eventually(
        async () => {
          const b = (await (
            await fetch(`${first.url}${BATCH}${created.id}/`, { headers: { 'x-api-key': key } })
          ).json()) as { completed: number; status: string }
          return (b.status === 'succeeded' || b.completed >= 100) && b
        },
        15_000,
        'the batch to pass 100 items',
      )
      expect(underWay.status).not.toBe('succeeded')
      expect(underWay.completed).toBeGreaterThanOrEqual(100)
      process.kill(first.proc.pid!, 'SIGKILL')
      await first.exited
      expect(readdirSync(join(dir, 'batches')).some((f) => f.endsWith('.part'))).toBe(true) // it died mid-file

      const second = await startServer(env)
      try {
        const done = await waitForBatch(second.url, created.id, key, 90_000)
        expect(done.status).toBe('succeeded')
        expect(done.completed).toBe(2000)
        expect(done.errors).toHaveLength(20)
        const download = await fetch(second.url + done.download_url, { headers: { 'x-api-key': key } })
        const names = (await readZip(new Uint8Array(await download.arrayBuffer()))).map((e) => e.name)
        expect(names).toHaveLength(1980)
        expect(new Set(names).size).toBe(1980) // no duplicates
        expect(readdirSync(join(dir, 'batches')).filter((f) => f.endsWith('.part'))).toEqual([])
      } finally {
        second.kill('SIGTERM')
        await second.exited
      }
    } finally {
      // the cluster outlived the killed server and was joined by the second: stop it here
      const pidFile = join(dir, 'pg', 'postmaster.pid')
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
        try {
          process.kill(pid, 'SIGINT')
        } catch {}
        // cleanup: a cluster slow to stop must not hide the test's own outcome
        await eventually(() => !existsSync(pidFile), 5_000, 'the cluster to stop').catch(() => {})
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }, 150_000)
})
