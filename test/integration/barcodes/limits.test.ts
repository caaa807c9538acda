import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expireBatches } from '../../../src/barcodes/batches'
import { MAX_PIXELS } from '../../../src/barcodes/png'
import { parseId } from '../../../src/shared/ids'
import { BATCH, waitForBatch } from '../../support/batches'
import { createKey, createOrganization, expectProblem, sql } from '../../support/fixtures'
import { baseUrl, get, post } from '../../support/server'

// No barcode request can hold the server: rasters are capped, batches are limited per
// organization, and finished outputs expire.
const largest = {
  barcode_type: 'code128',
  format: 'png',
  module_width: 2,
  module_height: 100,
  quiet_zone: 20,
  dpi: 1200,
}

describe('pixel cap', () => {
  test('a raster past the cap is 422 naming its size and the limit; vector formats of it still render', async () => {
    const org = await createOrganization()
    const key = await createKey(org, 'readonly')
    const res = await post('/products/api/v1/barcode/', { gtin: 'A'.repeat(80), ...largest }, key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.detail).toMatch(/would be \d+ × \d+ px/)
    expect(res.json.detail).toContain(`the limit is ${MAX_PIXELS / 1e6} million`)
    const svg = await post('/products/api/v1/barcode/', { gtin: 'A'.repeat(80), ...largest, format: 'svg' }, key)
    expect(svg.status).toBe(200)
    expect(svg.headers.get('content-type')).toBe('image/svg+xml')
  })

  test('in a batch, such rows are row errors and the rest is rendered', async () => {
    const org = await createOrganization()
    const key = await createKey(org, 'readonly')
    const items = [{ gtin: 'A'.repeat(80) }, { gtin: 'SHORT1' }]
    const res = await post(BATCH, { items, output: 'zip', ...largest, module_width: 0.5, dpi: 300 }, key)
    expect(res.status).toBe(202)
    const big = await post(BATCH, { items: [{ gtin: 'A'.repeat(80) }], output: 'zip', ...largest }, key)
    expect(big.status).toBe(202)
    const done = await waitForBatch(baseUrl, big.json.id, key)
    expect(done.status).toBe('succeeded')
    expect(done.errors).toHaveLength(1)
    expect(done.errors[0]!.reason).toContain('million pixels')
  }, 30_000)
})

describe('batch limits per organization', () => {
  const insertBatches = (orgId: string, n: number, status: string, createdAgo = '1 minute') =>
    sql(
      `insert into barcode_batches (organization_id, status, items, settings, output, total, created)
       select $1, $2::barcode_batch_status, '[]', '{}', 'zip', 0, now() - $3::interval from generate_series(1, $4)`,
      [orgId, status, createdAgo, n],
    )
  const body = { items: [{ gtin: '4006381333931' }], output: 'zip' }

  test('a third batch while two are queued or running is 429 with Retry-After; another organization is not affected', async () => {
    const [org, other] = await Promise.all([createOrganization(), createOrganization()])
    await insertBatches(parseId(org.id)!, 1, 'queued')
    await insertBatches(parseId(org.id)!, 1, 'running')
    const before = await sql<{ n: number }>('select count(*)::int n from barcode_batches where organization_id = $1', [
      parseId(org.id),
    ])
    const res = await post(BATCH, body, org.key)
    expectProblem(res, 429, 'rate_limited')
    expect(res.headers.get('retry-after')).toBe('30')
    expect(
      await sql('select count(*)::int n from barcode_batches where organization_id = $1', [parseId(org.id)]),
    ).toEqual(before)
    expect((await post(BATCH, body, other.key)).status).toBe(202)
  })

  test('past 20 batches in an hour: 429 until the oldest is an hour old', async () => {
    const org = await createOrganization()
    await insertBatches(parseId(org.id)!, 20, 'succeeded', '30 minutes')
    const res = await post(BATCH, body, org.key)
    expectProblem(res, 429, 'rate_limited')
    const wait = Number(res.headers.get('retry-after'))
    expect(wait).toBeGreaterThan(25 * 60)
    expect(wait).toBeLessThanOrEqual(30 * 60)
    const older = await createOrganization()
    await insertBatches(parseId(older.id)!, 20, 'succeeded', '61 minutes')
    expect((await post(BATCH, body, older.key)).status).toBe(202)
  })
})

describe('retention', () => {
  test('a finished batch says when it expires; after that its stored output is gone and the download is 410', async () => {
    const org = await createOrganization()
    const res = await post(BATCH, { items: [{ gtin: '4006381333931' }], output: 'zip' }, org.key)
    const done = await waitForBatch(baseUrl, res.json.id, org.key)
    expect(done.status).toBe('succeeded')
    const status = (await get(`${BATCH}${res.json.id}/`, org.key)).json
    const hours = (Date.parse(status.expires_at) - Date.parse(status.finished_at)) / 3600_000
    expect(hours).toBeCloseTo(24, 2)
    const id = parseId(res.json.id)
    const chunks = () => sql<{ n: number }>('select count(*)::int as n from barcode_outputs where batch_id = $1', [id])
    const [row] = await sql<{ output_store: string; output_bytes: string; file_path: string | null }>(
      'select output_store, output_bytes, file_path from barcode_batches where id = $1',
      [id],
    )
    expect(row).toMatchObject({ output_store: 'postgres', file_path: null })
    expect(Number(row!.output_bytes)).toBeGreaterThan(0)
    expect((await chunks())[0]!.n).toBe(1)

    await sql(`update barcode_batches set expires_at = now() - interval '1 second' where id = $1`, [
      parseId(res.json.id),
    ])
    expect(await expireBatches()).toBeGreaterThanOrEqual(1)
    expect((await chunks())[0]!.n).toBe(0)
    const [swept] = await sql<{ expired_at: Date | null; output_bytes: string | null }>(
      'select expired_at, output_bytes from barcode_batches where id = $1',
      [id],
    )
    expect(swept!.expired_at).not.toBeNull()
    expect(swept!.output_bytes).toBeNull()
    expectProblem(await get(`${BATCH}${res.json.id}/download`, org.key), 410, 'gone')
    expect((await get(`${BATCH}${res.json.id}/`, org.key)).json.download_url).toBeNull()
  }, 30_000)

  test('an output kept in a directory (BATCH_STORE=directory) downloads from its file and is removed at expiry', async () => {
    const org = await createOrganization()
    const res = await post(BATCH, { items: [{ gtin: '4006381333931' }], output: 'zip' }, org.key)
    expect((await waitForBatch(baseUrl, res.json.id, org.key)).status).toBe('succeeded')
    // as a batch finished by a process with BATCH_STORE=directory leaves it
    const dir = mkdtempSync(join(tmpdir(), 'gtin-batch-dir-'))
    const file = join(dir, 'kept.zip')
    writeFileSync(file, 'PK kept on disk')
    const id = parseId(res.json.id)
    await sql(
      `update barcode_batches set output_store = 'directory', file_path = $2, output_bytes = null where id = $1`,
      [id, file],
    )
    await sql('delete from barcode_outputs where batch_id = $1', [id])
    try {
      const got = await fetch(`${baseUrl}${BATCH}${res.json.id}/download`, { headers: { 'x-api-key': org.key } })
      expect(got.status).toBe(200)
      expect(await got.text()).toBe('PK kept on disk')
      await sql(`update barcode_batches set expires_at = now() - interval '1 second' where id = $1`, [id])
      expect(await expireBatches()).toBeGreaterThanOrEqual(1)
      expect(existsSync(file)).toBe(false)
      const [row] = await sql<{ file_path: string | null }>('select file_path from barcode_batches where id = $1', [id])
      expect(row!.file_path).toBeNull()
      expectProblem(await get(`${BATCH}${res.json.id}/download`, org.key), 410, 'gone')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
