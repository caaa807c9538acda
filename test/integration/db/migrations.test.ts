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
