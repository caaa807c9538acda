import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createKey,
  createOrganization,
  eventually,
  PRODUCTS,
  RETAILERS,
  sql,
  uniqueGtin,
} from '../../support/fixtures'
import { call, get, post } from '../../support/server'

// Issue 45: a feed's statement is keyed by its source, contributor and feed (two feeds of one
// organization never replace each other); Open Food Facts' own tags are candidates; a package
// size that is the net content leaves the name; runs end with one event to their organization,
// and products nobody holds emit none.

const RUNS = '/feeds/api/v1/runs'

async function upload(query: string, body: string, type: string, auth: Record<string, string>) {
  const started = await call('POST', `${RUNS}?${query}`, { raw: body, headers: { 'content-type': type, ...auth } })
  expect(started.status).toBe(202)
  return eventually(async () => {
    const run = await call('GET', `${RUNS}/${started.json.id}`, { headers: auth })
    expect(run.status).toBe(200)
    return run.json.status === 'succeeded' || run.json.status === 'failed' ? run.json : null
  }, 30_000)
}

const offLines = (lines: object[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`
const statementsOf = (gtin: string) =>
  sql<{ fields: Record<string, unknown>; source: string; scope: string | null }>(
    `select c.fields, c.source, c.scope from product_candidates c join products p on p.id = c.product_id
      where p.gtin = $1 order by c.created, c.id`,
    [gtin.padStart(14, '0')],
  )

describe('two affiliate feeds of one organization', () => {
  test('for two retailers keep a statement each; a feed run again replaces only its own', async () => {
    const org = await createOrganization()
    const manager = { 'x-api-key': org.key }
    const retailer = async (name: string) => (await post(RETAILERS, { name }, org.key)).json.id as string
    const [north, south] = [await retailer('North Shop'), await retailer('South Shop')]
    const gtin = uniqueGtin()
    const csv = (id: string, description: string) =>
      `id,title,description,link,availability,price,gtin\n${id},Lemonade,${description},https://shop.example/${id},in_stock,1.99 USD,${gtin}\n`
    const feed = (shop: string, id: string, description: string) =>
      upload(`source=affiliate&retailer_id=${shop}&file_name=${id}.csv`, csv(id, description), 'text/csv', manager)

    expect((await feed(north, 'N-1', 'Made with lemons')).status).toBe('succeeded')
    expect((await feed(south, 'S-1', 'Fresh and cold')).status).toBe('succeeded')
    const both = await statementsOf(gtin)
    expect(both.map((s) => [s.fields.description, s.scope])).toEqual([
      ['Made with lemons', parseId(north)],
      ['Fresh and cold', parseId(south)],
    ])
    expect(both.every((s) => s.source === 'crowd_sourced')).toBe(true)

    // the north feed again, with a new description: its own statement is replaced, south's stays
    expect((await feed(north, 'N-1', 'Squeezed today')).status).toBe('succeeded')
    expect((await statementsOf(gtin)).map((s) => [s.fields.description, s.scope])).toEqual([
      ['Fresh and cold', parseId(south)],
      ['Squeezed today', parseId(north)],
    ])
  }, 90_000)
})

describe("Open Food Facts' own tags", () => {
  test('allergens_tags and traces_tags without ingredient text are the product’s allergens', async () => {
    const gtin = uniqueGtin()
    const run = await upload(
      'source=off&file_name=tags.jsonl',
      offLines([
        {
          code: gtin,
          product_name: 'Milk chocolate',
          allergens_tags: ['en:milk'],
          traces_tags: ['en:nuts', 'en:not-an-allergen'],
          labels_tags: ['en:fair-trade'],
        },
      ]),
      'application/x-ndjson',
      ADMIN,
    )
    expect(run).toMatchObject({ status: 'succeeded', counts: { read: 1, created: 1, rejected: 0 } })
    const reader = await createOrganization()
    const product = (await get(`${PRODUCTS}/${gtin}`, reader.key)).json
    expect(product).toMatchObject({
      contains_allergens: ['milk'],
      may_contain_allergens: ['nuts'],
      certifications: ['fair-trade'],
    })
    expect(Object.keys(product.field_confidence)).toEqual(
      expect.arrayContaining(['contains_allergens', 'may_contain_allergens', 'certifications']),
    )
    const [stored] = await sql('select contains_allergens, may_contain_allergens from products where gtin = $1', [
      gtin.padStart(14, '0'),
    ])
    expect(stored).toEqual({ contains_allergens: ['milk'], may_contain_allergens: ['nuts'] })
    // "without milk" does not return it
    const found = await get(
      `/catalog/api/v1/search?q=${encodeURIComponent('Milk chocolate')}&exclude_allergens=milk`,
      reader.key,
    )
    expect(found.status).toBe(200)
    expect(found.json.results.map((r: { gtin?: string }) => r.gtin)).not.toContain(gtin.padStart(14, '0'))
  }, 60_000)
})

describe('names', () => {
  test('a USDA description ending in its package size keeps the name only', async () => {
    const gtin = uniqueGtin()
    const foods = {
      BrandedFoods: [
        {
          fdcId: 2_000_001,
          gtinUpc: gtin,
          description: 'ENERGY DRINK, 8 FL OZ CAN',
          brandOwner: 'Red Bull North America, Inc.',
          packageWeight: '8 fl oz/237 mL',
          ingredients: 'Carbonated water, sucrose, glucose, citric acid, taurine, caffeine.',
          modifiedDate: '2024-01-02',
        },
      ],
    }
    const run = await upload(
      'source=usda&format=usda_json&file_name=drink.json',
      JSON.stringify(foods),
      'application/octet-stream',
      ADMIN,
    )
    expect(run).toMatchObject({ status: 'succeeded', counts: { read: 1, created: 1, rejected: 0 } })
    const [row] = await sql('select product_name, net_content_value, net_content_uom from products where gtin = $1', [
      gtin.padStart(14, '0'),
    ])
    expect(row).toEqual({ product_name: 'Energy Drink', net_content_value: 237, net_content_uom: 'MLT' })
  }, 60_000)
})

describe('events of a run', () => {
  test('the organization gets feed_run.completed with the counts; its unowned products emit nothing', async () => {
    const org = await createOrganization()
    const manager = { 'x-api-key': org.key }
    const gtins = [uniqueGtin(), uniqueGtin()]
    const run = await upload(
      'source=off&file_name=events.jsonl',
      offLines([...gtins.map((code) => ({ code, product_name: 'Event test' })), { code: '123', product_name: 'Bad' }]),
      'application/x-ndjson',
      manager,
    )
    expect(run).toMatchObject({ status: 'succeeded', counts: { read: 3, created: 2, rejected: 1 } })
    const events = await sql<{ event_type: string; organization_id: string; data: any }>(
      'select event_type, organization_id, data from events where subject_id = $1',
      [parseId(run.id)],
    )
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      event_type: 'feed_run.completed',
      organization_id: parseId(org.id),
      data: { id: run.id, status: 'succeeded', counts: { read: 3, created: 2, rejected: 1 } },
    })
    const productEvents = await sql(
      `select e.event_type from events e join products p on p.id = e.subject_id where p.gtin = any($1::text[])`,
      [gtins.map((g) => g.padStart(14, '0'))],
    )
    expect(productEvents).toEqual([])
  }, 60_000)

  test('feed_run.failed goes to the organization when a run fails; a readonly key reads the run', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    // a named format is judged at the start of the run: a first line that is not a JSON object fails it
    const started = await call('POST', `${RUNS}?source=off&format=off_jsonl&file_name=array.jsonl`, {
      raw: `["code"]\n${JSON.stringify({ code: gtin, product_name: 'Oats' })}\n`,
      headers: { 'content-type': 'application/x-ndjson', 'x-api-key': org.key },
    })
    expect(started.status).toBe(202)
    const readonly = { 'x-api-key': await createKey(org, 'readonly') }
    const run = await eventually(async () => {
      const r = await call('GET', `${RUNS}/${started.json.id}`, { headers: readonly })
      expect(r.status).toBe(200)
      return r.json.status === 'failed' || r.json.status === 'succeeded' ? r.json : null
    })
    expect(run.status).toBe('failed')
    const events = await sql<{ event_type: string; organization_id: string; data: any }>(
      'select event_type, organization_id, data from events where subject_id = $1',
      [parseId(run.id)],
    )
    expect(events).toEqual([
      {
        event_type: 'feed_run.failed',
        organization_id: parseId(org.id)!,
        data: expect.objectContaining({ id: run.id, status: 'failed', error: run.error }),
      },
    ])
    expect((await call('GET', RUNS, { headers: readonly })).json.data.map((r: { id: string }) => r.id)).toContain(
      run.id,
    )
  }, 60_000)
})
