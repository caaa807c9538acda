import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { db } from '../../../src/db/client'
import { jsonInJsonbOrder } from '../../../src/db/jsonb-order'
import { arrayParam } from '../../../src/db/params'
import { type FeedFormat, readFeed } from '../../../src/feeds/adapters'

// Feed records' content hashes were computed on records read back from jsonb until migration 0040;
// they are now computed on the adapters' own objects through jsonInJsonbOrder, which must give the
// text PostgreSQL's jsonb order gives, for every record of the real sample feeds.
const FEEDS = join(import.meta.dir, '../../fixtures/feeds')
const SAMPLES: [FeedFormat, string][] = [
  ['off_jsonl', 'off/products.jsonl'],
  ['off_csv', 'off/products.csv'],
  ['usda_json', 'usda/branded_sample.json'],
  ['usda_csv', 'usda'],
  ['merchant_csv', 'affiliate/google_merchant.csv'],
  ['merchant_csv', 'affiliate/merchant_feed.tsv'],
]

async function recordsOf(format: FeedFormat, path: string) {
  const values: unknown[] = []
  for await (const row of readFeed({ format, path: join(FEEDS, path), observedAt: new Date('2026-11-01T00:00:00Z') }))
    if ('record' in row) values.push(JSON.parse(JSON.stringify([row.record.fields, row.record.offer ?? null])))
  return values
}

describe('JSON text in jsonb key order', () => {
  test.each(SAMPLES)('%s %s: the same text as the record read back from jsonb', async (format, path) => {
    const values = await recordsOf(format, path)
    expect(values.length).toBeGreaterThan(0)
    const { rows } = await db.execute<{ text: string }>(sql`select (v::jsonb)::text as text
      from unnest(${arrayParam(
        values.map((v) => JSON.stringify(v)),
        'text',
      )}) with ordinality as t(v, n) order by n`)
    expect(rows.map((r) => JSON.stringify(JSON.parse(r.text)))).toEqual(values.map(jsonInJsonbOrder))
  })

  test('keys by length, then by their bytes; nested objects and arrays too; undefined members left out', () => {
    const value = { product_name: 'x', brand: 'é"', b: [{ zz: 1, a: null, m: undefined }], é: true, z: 2 }
    expect(jsonInJsonbOrder(value)).toBe('{"b":[{"a":null,"zz":1}],"z":2,"é":true,"brand":"é\\"","product_name":"x"}')
    // the order an object was built in does not matter
    expect(jsonInJsonbOrder({ z: 2, b: [{ a: null, zz: 1 }], é: true, product_name: 'x', brand: 'é"' })).toBe(
      jsonInJsonbOrder(value),
    )
  })
})
