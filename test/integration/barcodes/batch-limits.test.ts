import { describe, expect, test } from 'bun:test'
import { BATCH_JSON_LIMIT } from '../../../src/barcodes/batch-schemas'
import { parseId } from '../../../src/shared/ids'
import { BATCH } from '../../support/batches'
import { createOrganization, expectProblem, PRODUCTS, sql } from '../../support/fixtures'
import { call } from '../../support/server'

// Issue 46: a 10,000-item batch with labels is larger than the global 1 MiB JSON limit, yet the
// route takes 10,000 items; and the CSV form required `output` although it is optional.
// GTINs here carry a wrong check digit: every row fails at once, so the batch job costs no rendering.
const badGtin = (i: number) => `40${String(i).padStart(11, '0')}`

/** JSON as Python's json.dumps writes it by default: ", " and ": " separators, non-ASCII as \uXXXX. */
const asciiJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/","/g, '", "')
    .replace(/":"/g, '": "')

const batchRows = async (organizationId: string) =>
  sql<{ total: number; output: string; template: string | null; label: string | null }>(
    `select total, output, template, items->0->>'label' as label from barcode_batches where organization_id = $1`,
    [parseId(organizationId)],
  )

describe('barcode batch limits', () => {
  test('10,000 items with 100-character labels as JSON (over 1 MiB) are accepted and stored', async () => {
    const org = await createOrganization()
    const label = 'Étiquette très longue pour le rayon crèmerie — lait entier, 1 litre, bouteille réutilisable ✓'
      .padEnd(100, 'é')
      .slice(0, 100)
    const items = Array.from({ length: 10_000 }, (_, i) => ({ gtin: badGtin(i), label }))
    const raw = JSON.stringify({ items, output: 'zip', format: 'svg' })
    expect(Buffer.byteLength(raw)).toBeGreaterThan(1024 * 1024)
    const res = await call('POST', BATCH, { key: org.key, raw, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ status: 'queued', total: 10_000, output: 'zip' })
    expect(await batchRows(org.id)).toEqual([{ total: 10_000, output: 'zip', template: null, label }])
  }, 60_000)

  test('the limit fits 10,000 items of the longest gtin and label, all escaped; one byte more is 413', async () => {
    const org = await createOrganization()
    const astral = '😀'.repeat(100) // 100 characters, 200 UTF-16 units: 1,200 bytes escaped
    const gtin = '😀'.repeat(50) // 100 UTF-16 units, the gtin's maxLength
    const body = { items: Array.from({ length: 10_000 }, () => ({ gtin, label: astral })), output: 'sheet' }
    const raw = asciiJson(body)
    expect(Buffer.byteLength(raw)).toBeGreaterThan(18_000_000)
    expect(Buffer.byteLength(raw)).toBeLessThanOrEqual(BATCH_JSON_LIMIT)
    const res = await call('POST', BATCH, { key: org.key, raw, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ total: 10_000, output: 'sheet', template: 'a4-3x8' })
    expect(await batchRows(org.id)).toEqual([{ total: 10_000, output: 'sheet', template: 'a4-3x8', label: astral }])

    const other = await createOrganization()
    const over = `${raw}${' '.repeat(BATCH_JSON_LIMIT - Buffer.byteLength(raw) + 1)}`
    const tooLarge = await call('POST', BATCH, {
      key: other.key,
      raw: over,
      headers: { 'content-type': 'application/json' },
    })
    expectProblem(tooLarge, 413, 'payload_too_large')
    expect(await batchRows(other.id)).toEqual([])
  }, 120_000)

  test('every other route keeps the 1 MiB JSON limit', async () => {
    const org = await createOrganization()
    const before = await sql<{ n: number }>('select count(*)::int as n from products')
    const raw = JSON.stringify({ gtin: '4000000000017', product_name: 'Big', description: 'x'.repeat(1024 * 1024) })
    const res = await call('POST', PRODUCTS, { key: org.key, raw, headers: { 'content-type': 'application/json' } })
    expectProblem(res, 413, 'payload_too_large')
    expect(res.json.detail).toContain(`${1024 * 1024} bytes`)
    expect(await sql<{ n: number }>('select count(*)::int as n from products')).toEqual(before)
  })

  test('output defaults to sheet in the CSV form; the JSON form names it (contract §8)', async () => {
    const org = await createOrganization()
    const csv = await call('POST', BATCH, {
      key: org.key,
      raw: `gtin,label\n${badGtin(1)},Oat drink`,
      headers: { 'content-type': 'text/csv' },
    })
    expect(csv.status).toBe(202)
    expect(csv.json).toMatchObject({ total: 1, output: 'sheet', template: 'a4-3x8', format: 'pdf' })
    const json = await call('POST', BATCH, { key: org.key, body: { items: [{ gtin: badGtin(2), label: 'Oat bar' }] } })
    expectProblem(json, 422, 'validation_error')
    expect(json.json.errors[0].field).toBe('output')
    const rows = await sql<{ output: string; label: string }>(
      `select output, items->0->>'label' as label from barcode_batches where organization_id = $1 order by created`,
      [parseId(org.id)],
    )
    expect(rows).toEqual([{ output: 'sheet', label: 'Oat drink' }])
  })
})
