import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  eventually,
  PRODUCTS,
  RETAILERS,
  sql,
  tableCounts,
  uniqueGtin,
} from '../../support/fixtures'
import { ROOT } from '../../support/process'
import { call, get, post } from '../../support/server'

// Issue 45, "poison never spreads": whatever one record of a feed does, it becomes a rejected row
// with its line and reason, and the rest of its chunk is written; the run ends.

const RUNS = '/feeds/api/v1/runs'

/** Uploads a feed file (the admin token's unless a key is given) and waits for its run to end. */
async function upload(query: string, body: string, type: string, key?: string) {
  const auth = key ? { 'x-api-key': key } : ADMIN
  const started = await call('POST', `${RUNS}?${query}`, { raw: body, headers: { 'content-type': type, ...auth } })
  expect(started.status).toBe(202)
  return eventually(async () => {
    const run = await call('GET', `${RUNS}/${started.json.id}`, { headers: auth })
    expect(run.status).toBe(200)
    return run.json.status === 'succeeded' || run.json.status === 'failed' ? run.json : null
  }, 30_000)
}

/** A real Open Food Facts line (the sample dump's Tulú drink, line 4) under another code. */
function offLine(code: string, change: (p: Record<string, unknown>) => void) {
  const lines = readFileSync(join(ROOT, 'test/fixtures/feeds/off/products.jsonl'), 'utf8').split('\n')
  const product = JSON.parse(lines[3]!)
  expect(product.labels_tags).toEqual(['en:vegetarian', 'en:no-preservatives', 'en:vegan'])
  product._id = code
  product.code = code
  change(product)
  return JSON.stringify(product)
}

const withoutIngredients = (p: Record<string, unknown>) => {
  for (const key of Object.keys(p)) if (key.startsWith('ingredients')) delete p[key]
}

describe('a record that used to throw', () => {
  test('an OFF line with labels_tags and no ingredients_text is written, new or existing product', async () => {
    const [existing, fresh] = [uniqueGtin(), uniqueGtin()]
    // the existing product has no ingredient text either (its first line names it only)
    const first = await upload(
      'source=off&file_name=first.jsonl',
      `${JSON.stringify({ code: existing, product_name: 'Strawberry drink' })}\n`,
      'application/x-ndjson',
    )
    expect(first).toMatchObject({ status: 'succeeded', counts: { read: 1, created: 1, rejected: 0 } })

    const lines = [offLine(existing, withoutIngredients), offLine(fresh, withoutIngredients)]
    const run = await upload('source=off&file_name=labels.jsonl', `${lines.join('\n')}\n`, 'application/x-ndjson')
    expect(run).toMatchObject({
      status: 'succeeded',
      error: null,
      counts: { read: 2, created: 1, updated: 1, unchanged: 0, rejected: 0 },
      rejected_sample: [],
    })
    const reader = await createOrganization()
    for (const gtin of [existing, fresh]) {
      const product = (await get(`${PRODUCTS}/${gtin}`, reader.key)).json
      expect(product).toMatchObject({
        product_name: 'Tulú Drinks - Strawberry Flavor',
        ingredients_text: '',
        contains_allergens: [],
        may_contain_allergens: [],
        substances: [],
      })
      expect(product.certifications).toEqual(expect.arrayContaining(['vegan', 'vegetarian']))
      const [row] = await sql<{ certifications: string[]; ingredients_text: string | null }>(
        'select certifications, ingredients_text from products where gtin = $1',
        [`0${gtin}`],
      )
      expect(row!.certifications).toEqual(expect.arrayContaining(['vegan', 'vegetarian']))
      expect(row!.ingredients_text ?? '').toBe('')
    }
  }, 60_000)
})

describe('a record the database refuses', () => {
  test('is rejected with its line and reason; the other rows of its chunk are written', async () => {
    const org = await createOrganization()
    const retailer = (await post(RETAILERS, { name: `Poison Market ${uniqueGtin()}` }, org.key)).json.id as string
    const [good1, poison, good2] = [uniqueGtin(), uniqueGtin(), uniqueGtin()]
    // a multipack of 99,999,999,999 passes the adapter but not the offers' integer column
    const row = (id: string, gtin: string, multipack = '') =>
      `${id},Drink ${id},https://shop.example/${id},in_stock,1.99 USD,${gtin},${multipack}`
    const csv = [
      'id,title,link,availability,price,gtin,multipack',
      row('P-1', good1),
      row('P-2', poison, '99999999999'),
      row('P-3', good2),
    ].join('\n')
    const before = await tableCounts()
    const run = await upload(
      `source=affiliate&retailer_id=${retailer}&file_name=poison.csv`,
      `${csv}\n`,
      'text/csv',
      org.key,
    )
    expect(run).toMatchObject({
      status: 'succeeded',
      error: null,
      counts: { read: 3, created: 2, updated: 0, unchanged: 0, rejected: 1 },
    })
    expect(run.rejected_sample).toEqual([
      {
        line: 3, // the file's line, the header being line 1 (as the adapter numbers a CSV's rows)
        reason: expect.stringMatching(/^not written: .*out of range for type integer/),
        input: expect.stringContaining(`"itemId":"P-2"`),
      },
    ])
    // the reason names the value, not the statement or its parameters
    expect(run.rejected_sample[0].reason).not.toContain('insert into')

    const offers = await sql<{ item_id: string; gtin: string }>(
      `select o.item_id, p.gtin from offers o join products p on p.id = o.product_id
        where o.retailer_id = $1 order by o.item_id`,
      [parseId(retailer)],
    )
    expect(offers).toEqual([
      { item_id: 'P-1', gtin: `0${good1}` },
      { item_id: 'P-3', gtin: `0${good2}` },
    ])
    // nothing of the refused row: no product, no statement, no offer, no event
    expect(await sql('select id from products where gtin = $1', [`0${poison}`])).toEqual([])
    expect(await sql('select key from feed_records where gtin = $1', [`0${poison}`])).toEqual([])
    const after = await tableCounts()
    expect(after.products! - before.products!).toBe(2)
  }, 60_000)
})
