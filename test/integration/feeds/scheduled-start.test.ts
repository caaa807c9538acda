import { afterAll, expect, test } from 'bun:test'
import { startScheduledImport } from '../../../src/feeds/scheduled'
import { parseId } from '../../../src/shared/ids'
import { sql } from '../../support/fixtures'

// A firing that cannot start still leaves a run, failed with the reason. Outside development (the
// tests run as APP_ENV=test) a feed URL must be https and reach only public addresses.
const origin = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('{}') })
const fetched = () => origin.pendingRequests
afterAll(() => origin.stop(true))

const run = async (id: string) =>
  (
    await sql<{ status: string; error: string; file: string }>(
      `select status, error, file from feed_runs where id = $1`,
      [parseId(id)],
    )
  )[0]!

test.each([
  [`http://127.0.0.1:${origin.port}/feed.jsonl`, 'only https:// feeds may be fetched (http:// only in development)'],
  [`https://127.0.0.1:${origin.port}/feed.jsonl`, 'refused: 127.0.0.1 is or resolves to 127.0.0.1, a loopback address'],
  ['https://169.254.169.254/latest/meta-data', 'a linkLocal address'],
  ['https://[::ffff:10.0.0.1]/feed.jsonl', 'a private address'],
  ['https://localhost/feed.jsonl', 'localhost'],
])('a feed URL %s is refused before any request', async (url, reason) => {
  const id = await startScheduledImport({ name: 'guarded', cron: '0 3 * * *', source: 'off', url })
  const stored = await run(id)
  expect(stored).toMatchObject({ status: 'failed', file: url })
  expect(stored.error).toStartWith('the download failed: ')
  expect(stored.error).toContain(reason)
  expect(fetched()).toBe(0)
})

test('a missing file, an unknown retailer or organization fail the run with the reason', async () => {
  const missing = await run(
    await startScheduledImport({ name: 'gone', cron: '0 3 * * *', source: 'off', path: 'nowhere/products.jsonl' }),
  )
  expect(missing).toMatchObject({ status: 'failed', file: 'nowhere/products.jsonl' })
  expect(missing.error).toContain('the file cannot be read')
  const stranger = await run(
    await startScheduledImport({
      name: 'shop',
      cron: '0 3 * * *',
      source: 'affiliate',
      format: 'merchant_csv',
      path: 'shop.csv',
      retailer_id: '00000000-0000-4000-8000-000000000000',
    }),
  )
  expect(stranger).toMatchObject({ status: 'failed', error: 'retailer not found' })
  const orphan = await run(
    await startScheduledImport({
      name: 'orphan',
      cron: '0 3 * * *',
      source: 'off',
      path: 'off/products.jsonl',
      organization_id: '00000000-0000-4000-8000-000000000001',
    }),
  )
  expect(orphan).toMatchObject({ status: 'failed', error: expect.stringContaining('organization not found') })
})
