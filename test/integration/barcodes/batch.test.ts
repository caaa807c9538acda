import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BATCH, batchItems, waitForBatch } from '../../support/batches'
import { decodePng } from '../../support/decode'
import { createOrganization, expectProblem } from '../../support/fixtures'
import { baseUrl, call, get, post } from '../../support/server'
import { readZip } from '../../support/zip'

const work = mkdtempSync(join(tmpdir(), 'gtin-batch-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))
const run = (cmd: string[]) => Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' }).stdout.toString()

describe('barcode batch export', () => {
  test('1,000 items with 10 invalid rows: 990 labels on exact pages, 10 row errors, progress, download', async () => {
    const org = await createOrganization()
    const items = batchItems(1000, 1)
    const res = await post(BATCH, { items, output: 'sheet', template: 'a4-3x8' }, org.key)
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({
      status: 'queued',
      output: 'sheet',
      template: 'a4-3x8',
      format: 'pdf',
      total: 1000,
      completed: 0,
      errors: [],
      download_url: null,
    })
    const done = await waitForBatch(baseUrl, res.json.id, org.key)
    expect(done.status).toBe('succeeded')
    expect(done.completed).toBe(1000)
    expect(done.errors).toHaveLength(10)
    expect(done.errors[0]).toEqual({ row: 8, input: items[7]!.gtin, reason: expect.stringContaining('check digit') })
    expect(done.errors.map((e: { row: number }) => e.row)).toEqual([8, 108, 208, 308, 408, 508, 608, 708, 808, 908])
    expect(done.download_url).toBe(`${BATCH}${res.json.id}/download`)

    const file = await fetch(baseUrl + done.download_url, { headers: { 'x-api-key': org.key } })
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe('application/pdf')
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename="barcodes-\w+\.pdf"$/)
    const pdf = join(work, 'sheet.pdf')
    writeFileSync(pdf, new Uint8Array(await file.arrayBuffer()))
    expect(run(['pdfinfo', pdf])).toMatch(/Pages:\s+42\n/) // ceil(990 / 24)
    expect(run(['pdfinfo', pdf])).toMatch(/Page size:\s+595\.2\d* x 841\.8\d* pts \(A4\)/)
    run(['pdftoppm', '-r', '300', '-png', '-f', '1', '-l', '1', '-singlefile', pdf, join(work, 'page1')])
    const decoded = decodePng(new Uint8Array(await Bun.file(join(work, 'page1.png')).arrayBuffer()))
    const valid = items.filter((_, i) => i % 100 !== 7).map((i) => i.gtin)
    expect(decoded.sort()).toEqual(valid.slice(0, 24).sort())
  }, 60_000)

  test('US Letter 3×10 (Avery 5160): 30 labels a page', async () => {
    const org = await createOrganization()
    const res = await post(
      BATCH,
      { items: batchItems(61, 2).filter((_, i) => i !== 7), output: 'sheet', template: 'letter-3x10' },
      org.key,
    )
    const done = await waitForBatch(baseUrl, res.json.id, org.key)
    const file = await fetch(baseUrl + done.download_url, { headers: { 'x-api-key': org.key } })
    const pdf = join(work, 'letter.pdf')
    writeFileSync(pdf, new Uint8Array(await file.arrayBuffer()))
    const info = run(['pdfinfo', pdf])
    expect(info).toMatch(/Pages:\s+2\n/)
    expect(info).toMatch(/Page size:\s+612 x 792 pts \(letter\)/)
  }, 30_000)

  test('CSV upload to a zip of SVG files: one file per valid row, row errors numbered from 1', async () => {
    const org = await createOrganization()
    const csv = [
      'gtin,label',
      '4006381333931,Pens',
      '96385074,Small',
      'not-a-gtin,Broken',
      '036000291452,',
      '4006381333932,Bad check',
    ].join('\r\n')
    const res = await call('POST', `${BATCH}?output=zip&format=svg&module_width=0.5`, {
      key: org.key,
      raw: csv,
      headers: { 'content-type': 'text/csv' },
    })
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ total: 5, output: 'zip', format: 'svg', template: null })
    const done = await waitForBatch(baseUrl, res.json.id, org.key)
    expect(done.errors.map((e: { row: number; input: string }) => [e.row, e.input])).toEqual([
      [3, 'not-a-gtin'],
      [5, '4006381333932'],
    ])
    const file = await fetch(baseUrl + done.download_url, { headers: { 'x-api-key': org.key } })
    expect(file.headers.get('content-type')).toBe('application/zip')
    const entries = await readZip(new Uint8Array(await file.arrayBuffer()))
    const names = entries.map((e) => e.name)
    expect(names.sort()).toEqual(['00000096385074.svg', '00036000291452.svg', '04006381333931.svg'])
    const svg = entries.find((e) => e.name === '04006381333931.svg')!.bytes.toString('utf8')
    expect(svg).toContain(`width="${95 * 0.5 + 13}mm"`)
  }, 30_000)

  test('validation: empty, over 10,000, bad options, CSV without gtin column or with a bad output; 415 for other types', async () => {
    const org = await createOrganization()
    expectProblem(await post(BATCH, { items: [], output: 'sheet' }, org.key), 422, 'validation_error')
    expectProblem(
      await post(BATCH, { items: batchItems(10_001, 3), output: 'sheet' }, org.key),
      422,
      'validation_error',
    )
    expectProblem(await post(BATCH, { items: batchItems(2, 3), output: 'pdf' }, org.key), 422, 'validation_error')
    expectProblem(
      await post(BATCH, { items: batchItems(2, 3), output: 'sheet', module_width: 3 }, org.key),
      422,
      'validation_error',
    )
    expectProblem(
      await post(BATCH, { items: batchItems(2, 3), output: 'sheet', template: 'a5' }, org.key),
      422,
      'validation_error',
    )
    const csv = (text: string, q = '?output=sheet') =>
      call('POST', `${BATCH}${q}`, { key: org.key, raw: text, headers: { 'content-type': 'text/csv' } })
    expectProblem(await csv('code\n4006381333931'), 422, 'validation_error')
    // output may be left out (default sheet: batch-limits.test.ts), but not be something else
    expectProblem(await csv('gtin\n4006381333931', '?output=pdf'), 422, 'validation_error')
    expectProblem(await csv('gtin\n4006381333931', '?output=sheet&module_width=5'), 422, 'validation_error')
    expectProblem(
      await call('POST', BATCH, { key: org.key, raw: 'gtin\n1', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    )
    expect((await post(BATCH, { items: batchItems(10_000, 4).slice(0, 1), output: 'zip' }, org.key)).status).toBe(202)
  })

  test("another organization's batch is 404; download before success is 409", async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const res = await post(BATCH, { items: batchItems(300, 5), output: 'zip', format: 'png' }, a.key)
    expectProblem(await get(`${BATCH}${res.json.id}/`, b.key), 404, 'not_found')
    expectProblem(await get(`${BATCH}${res.json.id}/download`, b.key), 404, 'not_found')
    expectProblem(await get(`${BATCH}${res.json.id}/download`, a.key), 409, 'conflict')
    expectProblem(await get(`${BATCH}2222222222222222222222/`, a.key), 404, 'not_found')
  })
})
