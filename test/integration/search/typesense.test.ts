import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import pg from 'pg'
import { Client } from 'typesense'
import { SEARCH_FIELDS } from '../../../src/catalog/fields'
import { parseId } from '../../../src/shared/ids'
import { ADMIN, eventually, PRODUCT_ROW_KEYS, uniqueGtin } from '../../support/fixtures'
import { ownDatabase } from '../../support/own-database'
import { run, startServer } from '../../support/process'
import { api } from '../../support/server'
import { type Recorded, startTypesenseFake } from '../../support/typesense-fake'

// Typesense mode (TYPESENSE_URL set) against a local stand-in that checks each request against
// Typesense's documented API. The service runs in its own processes on a database of its own, so
// its event consumers (registered only in Typesense mode) see every event of this file.
const KEY = 'typesense-test-key'
const SEARCH_KEY = 'search-only-parent-key-0123'
const fake = await startTypesenseFake(KEY)
const database = ownDatabase('typesense')
const env = {
  DATABASE_URL: database.url,
  TYPESENSE_URL: fake.url,
  TYPESENSE_API_KEY: KEY,
  TYPESENSE_SEARCH_API_KEY: SEARCH_KEY,
  TYPESENSE_PUBLIC_URL: 'https://search.example.test',
  ADMIN_TOKEN: ADMIN['x-admin-token'],
  SEARCH_ANONYMOUS_PER_MINUTE: '100000',
  LOG_LEVEL: 'warn',
}
const servers: Awaited<ReturnType<typeof startServer>>[] = []
let apiUrl = ''
let orgKey = ''
let orgId = ''
const gtins: Record<string, string> = {}

const { get, post, patch } = api(() => apiUrl)
const search = async (query: string, key?: string) => {
  const before = fake.requests.length
  const res = await get(`/catalog/api/v1/search?${query}`, key)
  expect(res.status).toBe(200)
  const sent = fake.requests.slice(before).filter((r) => r.path === '/multi_search')
  const searches = sent.flatMap((r) => (r.body as { searches: Record<string, unknown>[] }).searches)
  return { rows: res.json.results as any[], searches, sent }
}
const imports = (collection: string) =>
  fake.requests.filter((r) => r.path === `/collections/${collection}/documents/import`)
const lines = (r: Recorded) => String(r.body).split('\n').filter(Boolean)
const docsOf = (collection: string) => fake.collections.get(collection)?.docs ?? new Map()

const SEED = [
  { key: 'dark', product_name: 'Quorvane Dark Zimbelade', brand: 'Quorvane' },
  {
    key: 'milk',
    product_name: 'Quorvane Milk Zimbelade',
    brand: 'Quorvane',
    ingredients_text: 'sugar, whole milk powder, hazelnuts. USDA Organic',
  },
  { key: 'nitrite', product_name: 'Pellomar Smoked Tressel', brand: 'Pellomar', ingredients_text: 'pork, salt, E250' },
  {
    key: 'weak',
    product_name: 'Pellomar Tressel Spread',
    brand: 'Pellomar',
    ingredients_text: 'pork, sodium metebisulfite',
  },
]

beforeAll(async () => {
  await database.create()
  // the API alone first: events wait in the outbox until a worker starts, so their marks come in one go
  const apiServer = await startServer({ ...env, ROLE: 'api' })
  servers.push(apiServer)
  apiUrl = apiServer.url
  const created = await post(
    '/account/api/v1/organizations',
    { name: 'Typesense Org', owner_email: 'o@ts.test' },
    undefined,
    ADMIN,
  )
  expect(created.status).toBe(201)
  orgKey = created.json.api_key.key
  orgId = created.json.organization.id
  for (const { key, ...body } of SEED) {
    const gtin = uniqueGtin()
    const res = await post('/products/api/v1/products', { gtin, ...body }, orgKey)
    expect(res.status).toBe(201)
    gtins[key] = res.json.gtin
  }
  for (let i = 0; i < 36; i++) {
    const res = await post(
      '/products/api/v1/products',
      { gtin: uniqueGtin(), product_name: `Filler Wafer ${i}`, brand: 'Fillbrand' },
      orgKey,
    )
    expect(res.status).toBe(201)
  }
  const market = { name: 'Quorvane Market', website: 'https://quorvane.example', is_canonical: true }
  expect((await post('/retailers/api/v1/retailers', market, orgKey, ADMIN)).status).toBe(201)
  const own = { name: 'Quorvane Corner Shop', is_physical: true }
  expect((await post('/retailers/api/v1/retailers', own, orgKey)).status).toBe(201)
  servers.push(await startServer({ ...env, ROLE: 'worker' }))
  await eventually(async () => (docsOf('products').size === 40 && docsOf('retailers').size === 2 ? true : null))
}, 60_000)

afterAll(async () => {
  for (const s of servers) s.kill('SIGKILL')
  fake.stop()
})

describe('Typesense mode: the index', () => {
  test('collections are created from the declared schema, searchable fields from the product field list', () => {
    const creates = fake.requests.filter((r) => r.method === 'POST' && r.path === '/collections')
    expect(creates.map((r) => (r.body as { name: string }).name).sort()).toEqual(['brands', 'products', 'retailers'])
    const products = creates.find((r) => (r.body as { name: string }).name === 'products')!.body as {
      fields: { name: string; type: string; infix?: boolean; index?: boolean }[]
    }
    const fields = new Map(products.fields.map((f) => [f.name, f]))
    for (const f of SEARCH_FIELDS) expect(fields.get(f.name)).toMatchObject({ type: 'string' })
    expect(fields.get('product_name')).toMatchObject({ infix: true })
    expect(fields.get('contains_allergens')).toMatchObject({ type: 'string[]' })
    expect(fields.get('substances')).toMatchObject({ index: false })
  })

  test('changes reach Typesense in batched upserts: 40 products in far fewer imports', () => {
    const calls = imports('products')
    expect(calls.length).toBeGreaterThan(0)
    expect(calls.length).toBeLessThan(10)
    for (const c of calls) expect(c.query.action).toBe('upsert')
    expect(calls.reduce((n, c) => n + lines(c).length, 0)).toBeGreaterThanOrEqual(40)
    expect(Math.max(...calls.map((c) => lines(c).length))).toBeGreaterThan(1)
    // the brand's document carries its product count
    const brand = [...docsOf('brands').values()].find((d) => d.name === 'Quorvane')
    expect(brand).toMatchObject({ product_count: 2 })
  })

  test('a renamed product is upserted again; nothing is left marked', async () => {
    const res = await patch(
      `/products/api/v1/products/${gtins.dark}`,
      { product_name: 'Quorvane Noir Zimbelade' },
      orgKey,
    )
    expect(res.status).toBe(200)
    await eventually(async () =>
      [...docsOf('products').values()].some((d) => d.product_name === 'Quorvane Noir Zimbelade') ? true : null,
    )
    await eventually(async () => {
      const admin = new pg.Client(database.url)
      await admin.connect()
      const { rows } = await admin.query('select count(*)::int as n from search_index_pending')
      await admin.end()
      return rows[0].n === 0 ? true : null
    })
  })
})

describe('Typesense mode: queries', () => {
  test('words: one multi_search across the three collections, no typos or dropped words; the rows of the contract', async () => {
    const { rows, searches, sent } = await search('q=zimbelade%20milk')
    expect(sent).toHaveLength(1)
    expect(searches.map((s) => s.collection).sort()).toEqual(['brands', 'products', 'retailers'])
    const products = searches.find((s) => s.collection === 'products')!
    expect(products).toMatchObject({
      q: 'zimbelade milk',
      num_typos: 0,
      drop_tokens_threshold: 0,
      prefix: true,
      per_page: 20,
    })
    expect(String(products.query_by).split(',')).toEqual(expect.arrayContaining(['product_name', 'brand', 'gtin_text']))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      type: 'product',
      name: 'Quorvane Milk Zimbelade',
      gtin: gtins.milk,
      brand: 'Quorvane',
      match: 'fulltext',
      contains_allergens: ['milk', 'nuts'],
      certifications: ['organic', 'usda-organic'],
      substance_flags: [],
    })
    expect(Object.keys(rows[0]).sort()).toEqual(PRODUCT_ROW_KEYS)
    expect(rows[0].rank).toBeGreaterThan(0)
    expect(rows[0].rank).toBeLessThan(1)
  })

  test('phrases and exclusions pass through; OR becomes one search per alternative, merged', async () => {
    const phrase = await search(`q=${encodeURIComponent('"milk zimbelade" -hazel')}&type=product`)
    expect(phrase.searches.map((s) => s.q)).toEqual(['"milk zimbelade" -hazel'])
    expect(phrase.rows.map((r) => r.name)).toEqual(['Quorvane Milk Zimbelade'])
    const or = await search(`q=${encodeURIComponent('tressel OR noir')}&type=product`)
    expect(or.searches.map((s) => s.q).sort()).toEqual(['noir', 'tressel'])
    expect(or.rows.map((r) => r.name).sort()).toEqual([
      'Pellomar Smoked Tressel',
      'Pellomar Tressel Spread',
      'Quorvane Noir Zimbelade',
    ])
    expect(or.rows.map((r) => r.rank)).toEqual([...or.rows.map((r) => r.rank)].sort((a, b) => b - a))
  })

  test('filters become filter_by; brands pass; retailers by visibility', async () => {
    const { rows, searches } = await search(
      'q=quorvane&exclude_allergens=nuts&certifications=organic&exclude_substances=e250',
    )
    const byCollection = Object.fromEntries(searches.map((s) => [s.collection, s.filter_by]))
    expect(byCollection.products).toBe(
      'contains_allergens:!=[`nuts`] && certifications:=[`organic`] && confident_substances:!=[`e250`]',
    )
    expect(byCollection.brands).toBeUndefined()
    expect(byCollection.retailers).toBe('is_active:=true && is_canonical:=true')
    expect(rows.filter((r) => r.type === 'product')).toEqual([])
    expect(rows.map((r) => r.type).sort()).toEqual(['brand', 'retailer'])
    const keyed = await search('q=quorvane&type=retailer', orgKey)
    expect(keyed.searches[0]!.filter_by).toContain('(is_canonical:=true || organization_id:=`')
    expect(keyed.rows.map((r) => r.name).sort()).toEqual(['Quorvane Corner Shop', 'Quorvane Market'])
    const weak = await search('q=pellomar&exclude_substances=e250&exclude_substances=sulphite&type=product')
    expect(weak.rows.map((r) => r.name)).toEqual(['Pellomar Tressel Spread'])
    expect(weak.rows[0].substance_flags).toEqual([{ slug: 'sulphite', span: 'sodium metebisulfite', confidence: 0.6 }])
  })

  test('a GTIN is an exact filter, ranked 1; then infix for a substring; then typos', async () => {
    const exact = await search(`q=${gtins.nitrite}`)
    expect(exact.searches[0]).toMatchObject({ collection: 'products', q: '*', filter_by: `gtin:=\`${gtins.nitrite}\`` })
    expect(exact.rows[0]).toMatchObject({ name: 'Pellomar Smoked Tressel', match: 'gtin', rank: 1 })
    const inner = await search('q=belad&type=product')
    const infix = inner.searches.find((s) => s.infix)!
    expect(String(infix.infix).split(',')[String(infix.query_by).split(',').indexOf('product_name')]).toBe('always')
    expect(inner.rows.map((r) => r.match)).toEqual(['substring', 'substring'])
    const typo = await search('q=zimbelaed&type=product')
    expect(typo.searches.at(-1)).toMatchObject({ num_typos: 2 })
    expect(new Set(typo.rows.map((r) => r.match))).toEqual(new Set(['fuzzy']))
    expect(typo.rows.map((r) => r.name).sort()).toEqual(['Quorvane Milk Zimbelade', 'Quorvane Noir Zimbelade'])
  })
})

describe('Typesense mode: full reindex', () => {
  test('npm run cli -- search reindex: every row in batches of 500, with progress', async () => {
    const admin = new pg.Client(database.url)
    await admin.connect()
    await admin.query(`insert into products (gtin, product_name)
      select lpad((5000000000000 + i * 10)::text, 14, '0'), 'Bulk Biscuit ' || i from generate_series(1, 1000) i`)
    await admin.end()
    const before = imports('products').length
    const result = await run([process.execPath, 'scripts/cli/index.ts', 'search', 'reindex'], env)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('indexed 1040 products, 3 brands, 2 retailers')
    expect(result.output).toMatch(/indexed products 1040\/1040/)
    const sizes = imports('products')
      .slice(before)
      .map((c) => lines(c).length)
    expect(sizes).toEqual([500, 500, 40])
    expect(docsOf('products').size).toBe(1040)
  }, 60_000)
})

describe('Typesense mode: scoped search keys', () => {
  const mint = (body: unknown, key = orgKey) => post('/catalog/api/v1/search-keys', body, key)

  test("one key per collection, equal to the official client's generateScopedSearchKey, embedding filters and expiry", async () => {
    const from = Math.floor(Date.now() / 1000) + 600
    const res = await mint({ exclude_allergens: ['milk', 'nuts'], certifications: ['organic'], expires_in: 600 })
    const to = Math.floor(Date.now() / 1000) + 600
    expect(res.status).toBe(201)
    expect(res.json.url).toBe('https://search.example.test')
    const keys = res.json.keys as { type: string; collection: string; key: string; parameters: any }[]
    expect(keys.map((k) => [k.type, k.collection])).toEqual([
      ['product', 'products'],
      ['brand', 'brands'],
      ['retailer', 'retailers'],
    ])
    const expiresAt = keys[0]!.parameters.expires_at
    expect(expiresAt).toBeGreaterThanOrEqual(from)
    expect(expiresAt).toBeLessThanOrEqual(to)
    expect(res.json.expires_at).toBe(new Date(expiresAt * 1000).toISOString())
    expect(keys[0]!.parameters).toEqual({
      filter_by: 'contains_allergens:!=[`milk`,`nuts`] && certifications:=[`organic`]',
      expires_at: expiresAt,
    })
    expect(keys[1]!.parameters).toEqual({ expires_at: expiresAt })
    expect(keys[2]!.parameters).toEqual({
      filter_by: `is_active:=true && (is_canonical:=true || organization_id:=\`${parseId(orgId)}\`)`,
      expires_at: expiresAt,
    })

    // each collection's keys are signed by a parent of its own, which the service created in
    // Typesense with the admin key: allowed documents:search on that one collection only
    const official = new Client({ nodes: [{ url: fake.url }], apiKey: 'not-used-for-signing' })
    for (const k of keys) {
      const parents = fake.keys.filter((p) => p.collections.includes(k.collection))
      expect(parents.map((p) => [p.actions, p.collections])).toEqual([[['documents:search'], [k.collection]]])
      expect(parents[0]!.value).not.toBe(SEARCH_KEY)
      expect(k.key).toBe(official.keys().generateScopedSearchKey(parents[0]!.value, k.parameters))
    }
    // and the documented scheme, checked independently: base64(HMAC-SHA256 base64 + parent prefix + JSON)
    const parent = fake.keys.find((p) => p.collections[0] === 'products')!.value
    const json = JSON.stringify(keys[0]!.parameters)
    const digest = createHmac('sha256', parent).update(json).digest('base64')
    expect(Buffer.from(keys[0]!.key, 'base64').toString()).toBe(`${digest}${parent.slice(0, 4)}${json}`)

    const some = await mint({ type: ['brand'] })
    expect(some.status).toBe(201)
    expect(some.json.keys.map((k: { type: string }) => k.type)).toEqual(['brand'])
    expect(some.json.keys[0].parameters.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(3590)
  })

  test('refused to non-manager keys; bad bodies are 422', async () => {
    for (const role of ['editor', 'readonly']) {
      const created = await post(
        `/account/api/v1/organizations/${orgId}/api-keys`,
        { name: `${role} key`, role },
        orgKey,
      )
      expect(created.status).toBe(200)
      const refused = await mint({}, created.json.key)
      expect(refused.status).toBe(403)
      expect(refused.json.code).toBe('forbidden')
    }
    expect((await mint({})).status).toBe(201)
    for (const body of [
      { expires_in: 30 },
      { expires_in: 86_401 },
      { exclude_allergens: ['chocolate'] },
      { type: ['product', 'product'] },
      { type: [] },
      { filter_by: 'id:*' },
    ]) {
      const res = await mint(body)
      expect(res.status, JSON.stringify(body)).toBe(422)
    }
  })
})
