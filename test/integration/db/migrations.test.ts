import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import pg from 'pg'
import { createOrganization, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { databaseUrl, post } from '../../support/server'

const MIGRATIONS = join(import.meta.dir, '../../../src/db/migrations')

/** Runs one committed migration again, in a transaction that is rolled back afterwards. */
async function replay(
  file: string,
  check: (query: (text: string, values?: unknown[]) => Promise<unknown[]>) => Promise<void>,
) {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query('begin')
    for (const statement of (await Bun.file(join(MIGRATIONS, file)).text()).split('--> statement-breakpoint'))
      await client.query(statement)
    await check(async (text, values) => (await client.query(text, values)).rows)
  } finally {
    await client.query('rollback')
    await client.end()
  }
}

describe('data migrations', () => {
  test('0005 renames stored single-E additive slugs to their E-number and keeps the rest', async () => {
    const org = await createOrganization()
    const created = await post(PRODUCTS, { gtin: uniqueGtin(), product_name: 'Cured ham' }, org.key)
    expect(created.status).toBe(201)
    const product = created.json as { gtin: string }
    const stored = [
      { slug: 'sodium-nitrite', span: 'sodium nitrite', confidence: 1 },
      { slug: 'palm-oil', span: 'palm oil', confidence: 1 },
      { slug: 'aspartame', span: 'aspartame', confidence: 0.9 },
    ]
    await sql('update products set substances = $2 where gtin = $1', [product.gtin, JSON.stringify(stored)])
    await replay('0005_substance_ids.sql', async (query) => {
      const [row] = (await query('select substances from products where gtin = $1', [product.gtin])) as {
        substances: unknown
      }[]
      expect(row!.substances).toEqual([
        { slug: 'e250', span: 'sodium nitrite', confidence: 1 },
        { slug: 'palm-oil', span: 'palm oil', confidence: 1 },
        { slug: 'e951', span: 'aspartame', confidence: 0.9 },
      ])
    })
  })
})

describe('0040: chunk payloads as text', () => {
  test('a chunk waiting at the upgrade keeps its records, as the same JSON in a text column', async () => {
    const records = [
      { gtin14: '07610000000004', reading: 'gtin13', version: 1, fields: { product_name: 'Oats "fine"' }, line: 1 },
    ]
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      await client.query('begin')
      // the column as 0030 left it, with a chunk waiting in it
      await client.query('alter table feed_run_chunks alter column payload type json using payload::json')
      const [run] = (
        await client.query(
          `insert into feed_runs (source, format, file) values ('off', 'off_jsonl', 'upgrade.jsonl') returning id`,
        )
      ).rows
      await client.query('insert into feed_run_chunks (run_id, chunk, payload) values ($1, 1, $2::json)', [
        run.id,
        JSON.stringify(records),
      ])
      for (const statement of (await Bun.file(join(MIGRATIONS, '0040_chunk_payload_text.sql')).text()).split(
        '--> statement-breakpoint',
      ))
        await client.query(statement)
      const [column] = (
        await client.query(`select data_type, attcompression from information_schema.columns c
          join pg_attribute a on a.attrelid = 'feed_run_chunks'::regclass and a.attname = c.column_name
          where c.table_name = 'feed_run_chunks' and c.column_name = 'payload'`)
      ).rows
      expect(column.data_type).toBe('text')
      // lz4 where this PostgreSQL has it, else the default (the embedded cluster's binaries have no lz4)
      expect(['l', '']).toContain(column.attcompression)
      const [chunk] = (await client.query('select payload from feed_run_chunks where run_id = $1', [run.id])).rows
      expect(typeof chunk.payload).toBe('string')
      expect(JSON.parse(chunk.payload)).toEqual(records)
    } finally {
      await client.query('rollback')
      await client.end()
    }
  })
})
