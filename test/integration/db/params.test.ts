import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { db } from '../../../src/db/client'
import { arrayParam, unnestRows } from '../../../src/db/params'

// Bulk writes send rows as column arrays (one parameter per column): whatever a value holds,
// PostgreSQL must read back exactly what was sent.
const TRICKY = [
  'plain',
  'a "quoted" word',
  'back\\slash',
  'ends with \\',
  '\\"',
  '{braces},commas',
  'NULL',
  '',
  ' spaced ',
  'ünïcödé ✓ 😀',
  'line\nbreak\ttab',
]

describe('array parameters', () => {
  test('text arrays come back from PostgreSQL exactly as sent, nulls included', async () => {
    const values = [...TRICKY, null]
    const { rows } = await db.execute<{ a: (string | null)[] }>(sql`select ${arrayParam(values, 'text')} as a`)
    expect(rows[0]!.a).toEqual(values)
  })

  test('jsonb, numbers and uuids in unnest column arrays', async () => {
    const data = TRICKY.map((text, i) => ({ text, i, nested: { list: [text, null] } }))
    const rows = data.map((d, i) => ({
      json: JSON.stringify(d),
      n: i * 1_000_000_007,
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    }))
    const result = await db.execute<{ json: unknown; n: string; id: string }>(
      sql`select json, n::text, id::text from ${unnestRows(rows, 'r', {
        json: ['jsonb', (r) => r.json],
        n: ['int8', (r) => r.n],
        id: ['uuid', (r) => r.id],
      })}`,
    )
    expect(result.rows.map((r) => r.json)).toEqual(data)
    expect(result.rows.map((r) => Number(r.n))).toEqual(rows.map((r) => r.n))
    expect(result.rows.map((r) => r.id)).toEqual(rows.map((r) => r.id))
  })
})
