import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseId } from '../../../src/shared/ids'
import { BATCH, batchItems, waitForBatch } from '../../support/batches'
import { tempDir } from '../../support/cluster'
import { ownService } from '../../support/own-service'
import { startServer } from '../../support/process'
import { readZip } from '../../support/zip'

// Two service processes on one database and nothing else in common, as on two hosts: "api" serves
// HTTP only (no workers), "render" runs the batch job; each has its own DATA_DIR. The renderer's
// directory is removed once the batch has succeeded, so the download can come only from the
// database.
const apiDir = tempDir('batch-api')
const renderDir = tempDir('batch-render')
const api = ownService('batch_hosts', { DATA_DIR: apiDir, ROLE: 'api' })
let render: Awaited<ReturnType<typeof startServer>>

beforeAll(async () => {
  await api.start()
  render = await startServer({ DATABASE_URL: api.database.url, DATA_DIR: renderDir, ROLE: 'all', LOG_LEVEL: 'warn' })
}, 60_000)

afterAll(async () => {
  render?.kill('SIGTERM')
  await render?.exited
  await api.stop()
  rmSync(apiDir, { recursive: true, force: true })
  rmSync(renderDir, { recursive: true, force: true })
}, 60_000)

const download = async (base: string, path: string, key: string) => {
  const res = await fetch(base + path, { headers: { 'x-api-key': key } })
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

/** The output as the database holds it: its chunks in order, joined. */
async function storedOutput(id: string) {
  const chunks = await api.query<{ seq: number; bytes: Buffer }>(
    'select seq, bytes from barcode_outputs where batch_id = $1 order by seq',
    [parseId(id)],
  )
  return { chunks: chunks.length, bytes: new Uint8Array(Buffer.concat(chunks.map((c) => c.bytes))) }
}

describe('batch outputs live in PostgreSQL (BATCH_STORE=postgres, the default)', () => {
  test('a zip and a sheet started on one process download byte-identical from the other', async () => {
    const org = await api.call('POST', '/account/api/v1/organizations', undefined, {
      name: 'Two Hosts',
      owner_email: 'ops@two-hosts.test',
    })
    expect(org.status).toBe(201)
    const key = org.json.api_key.key as string
    const zip = await api.call('POST', BATCH, key, { items: batchItems(600, 21), output: 'zip', format: 'png' })
    const sheet = await api.call('POST', BATCH, key, { items: batchItems(100, 22), output: 'sheet' })
    expect([zip.status, sheet.status]).toEqual([202, 202])

    const zipDone = await waitForBatch(api.url, zip.json.id, key, 120_000)
    const sheetDone = await waitForBatch(api.url, sheet.json.id, key, 120_000)
    expect([zipDone.status, sheetDone.status]).toEqual(['succeeded', 'succeeded'])
    // nothing of the outputs stays on either host's disk; the renderer's directory goes as a host would
    for (const dir of [apiDir, renderDir])
      expect(existsSync(join(dir, 'batches')) ? readdirSync(join(dir, 'batches')) : []).toEqual([])
    rmSync(renderDir, { recursive: true, force: true })

    const fromApi = await download(api.url, zipDone.download_url, key)
    expect(fromApi.res.status).toBe(200)
    expect(fromApi.res.headers.get('content-type')).toBe('application/zip')
    const fromRender = await download(render.url, zipDone.download_url, key)
    expect(fromRender.res.status).toBe(200)
    expect(Buffer.compare(fromApi.bytes, fromRender.bytes)).toBe(0)
    const stored = await storedOutput(zip.json.id)
    expect(stored.chunks).toBeGreaterThan(1) // large enough to be streamed in several chunks
    expect(Buffer.compare(stored.bytes, fromApi.bytes)).toBe(0)
    const [row] = await api.query<{ output_store: string; output_bytes: string; file_path: string | null }>(
      'select output_store, output_bytes, file_path from barcode_batches where id = $1',
      [parseId(zip.json.id)],
    )
    expect(row).toEqual({ output_store: 'postgres', output_bytes: String(fromApi.bytes.length), file_path: null })
    const entries = await readZip(fromApi.bytes)
    expect(entries).toHaveLength(594) // 600 less the 6 rows with a wrong check digit
    expect(entries.every((e) => e.bytes.subarray(1, 4).toString() === 'PNG')).toBe(true)

    const pdf = await download(api.url, sheetDone.download_url, key)
    expect(pdf.res.status).toBe(200)
    expect(pdf.res.headers.get('content-type')).toBe('application/pdf')
    expect(Buffer.compare((await download(render.url, sheetDone.download_url, key)).bytes, pdf.bytes)).toBe(0)
    expect(Buffer.compare((await storedOutput(sheet.json.id)).bytes, pdf.bytes)).toBe(0)
    const file = join(apiDir, 'sheet.pdf')
    writeFileSync(file, pdf.bytes)
    const info = Bun.spawnSync(['pdfinfo', file], { stdout: 'pipe' }).stdout.toString()
    expect(info).toMatch(/Pages:\s+5\n/) // 99 labels, 24 a page
  }, 240_000)
})
