import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { COLLECTIONS } from '../../../src/search/typesense/schema'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  PRODUCTS,
  RETAILERS,
  sql,
  type TestOrg,
  unique,
  uniqueGtin,
} from '../../support/fixtures'
import { startServer } from '../../support/process'
import { databaseUrl, get, post } from '../../support/server'
import { startTypesenseFake } from '../../support/typesense-fake'

// Issue 44, finding 5 (private data): a private retailer's offers are its organization's alone,
// and a scoped Typesense search key works on the one collection it was minted for.

describe("a private retailer's offers", () => {
  let owner: TestOrg
  let stranger: TestOrg
  let gtin: string
  let privateShop: string
  let canonicalShop: string

  /** An offer of `retailer` for the product, as an affiliate feed run writes it. */
  const offer = (retailer: string, itemId: string, price: string) =>
    sql(
      `insert into offers (retailer_id, product_id, item_id, title, price, regular_price, currency, url, availability, observed_at)
       select $1, id, $2::text, 'Offer', $3::numeric, $3::numeric, 'USD', 'https://shop.example/' || $2::text, 'in_stock', now()
       from products where gtin = $4`,
      [parseId(retailer), itemId, price, gtin.padStart(14, '0')],
    )
  const storedOffers = () =>
    sql(
      `select o.retailer_id, o.item_id, o.price::text, o.modified from offers o join products p on p.id = o.product_id
       where p.gtin = $1 order by o.item_id`,
      [gtin.padStart(14, '0')],
    )

  beforeAll(async () => {
    ;[owner, stranger] = await Promise.all([createOrganization(), createOrganization()])
    gtin = uniqueGtin()
    const product = await post(PRODUCTS, { gtin, product_name: unique('Offered Tea') }, owner.key)
    expect(product.status).toBe(201)
    privateShop = (await post(RETAILERS, { name: unique('Private Shop') }, owner.key)).json.id
    canonicalShop = (await post(RETAILERS, { name: unique('Open Shop'), is_canonical: true }, owner.key, ADMIN)).json.id
    await offer(privateShop, unique('PRIV'), '4.20')
    await offer(canonicalShop, unique('OPEN'), '3.10')
  })

  test("another organization's key lists none of them (the retailer itself is 404 to it)", async () => {
    const before = await storedOffers()
    expect(before).toHaveLength(2)
    expect((await get(`${RETAILERS}/${privateShop}`, stranger.key)).status).toBe(404)
    const listed = await get(`${PRODUCTS}/${gtin}/offers`, stranger.key)
    expect(listed.status).toBe(200)
    expect(listed.json.data.map((o: { retailer_id: string }) => o.retailer_id)).toEqual([canonicalShop])
    expect(listed.json.pagination.total_count).toBe(1)
    const filtered = await get(`${PRODUCTS}/${gtin}/offers?retailer_id=${privateShop}`, stranger.key)
    expect(filtered.status).toBe(200)
    expect(filtered.json.data).toEqual([])
    // the retailer's own organization sees both
    const own = await get(`${PRODUCTS}/${gtin}/offers`, owner.key)
    expect(own.json.data.map((o: { retailer_id: string }) => o.retailer_id).sort()).toEqual(
      [privateShop, canonicalShop].sort(),
    )
    expect(await storedOffers()).toEqual(before)
  })
})

const ADMIN_KEY = 'privacy-typesense-admin-key'
// the search-only key an operator created for the service, on every collection (as the
// configuration asked until now)
const SEARCH_KEY = 'privacy-search-only-key-0123'
const fake = await startTypesenseFake(ADMIN_KEY)

describe('scoped Typesense search keys', () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let org: TestOrg

  const typesense = async (path: string, key: string, body: unknown) => {
    const res = await fetch(fake.url + path, {
      method: 'POST',
      headers: { 'x-typesense-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: res.status, json: (await res.json()) as any }
  }
  const searchWith = (key: string, collection: string, filter = '') =>
    typesense('/multi_search', key, {
      searches: [{ collection, q: '*', query_by: 'name', ...(filter ? { filter_by: filter } : {}) }],
    })

  beforeAll(async () => {
    expect(
      (
        await typesense('/keys', ADMIN_KEY, {
          description: 'search-only',
          actions: ['documents:search'],
          collections: ['*'],
          value: SEARCH_KEY,
        })
      ).status,
    ).toBe(201)
    for (const schema of Object.values(COLLECTIONS)) await typesense('/collections', ADMIN_KEY, schema)
    // another organization's private, inactive retailer in the index
    const doc = {
      id: 'r-private',
      name: 'Hidden Wholesale Partner',
      category: '',
      is_active: false,
      is_canonical: false,
      organization_id: '00000000-0000-4000-8000-000000000001',
      is_online: true,
      is_physical: false,
      title_len: 24,
    }
    await fetch(`${fake.url}/collections/retailers/documents/import?action=upsert`, {
      method: 'POST',
      headers: { 'x-typesense-api-key': ADMIN_KEY, 'content-type': 'text/plain' },
      body: JSON.stringify(doc),
    })
    org = await createOrganization()
    server = await startServer({
      DATABASE_URL: databaseUrl,
      ROLE: 'api',
      LOG_LEVEL: 'warn',
      TYPESENSE_URL: fake.url,
      TYPESENSE_API_KEY: ADMIN_KEY,
      TYPESENSE_SEARCH_API_KEY: SEARCH_KEY,
    })
  }, 60_000)

  afterAll(async () => {
    server?.kill('SIGKILL')
    await server?.exited
    fake.stop()
  })

  test("each key's parent is allowed one collection; a brands key cannot read the retailers collection", async () => {
    const res = await fetch(`${server.url}/catalog/api/v1/search-keys`, {
      method: 'POST',
      headers: { 'x-api-key': org.key, 'content-type': 'application/json' },
      body: JSON.stringify({ expires_in: 600 }),
    })
    expect(res.status).toBe(201)
    const { keys } = (await res.json()) as {
      keys: { type: string; collection: string; key: string; parameters: any }[]
    }
    expect(keys.map((k) => k.collection)).toEqual(['products', 'brands', 'retailers'])
    for (const k of keys) {
      // decoded: <HMAC base64 (44)><the parent's first 4 characters><embedded parameters>
      const decoded = Buffer.from(k.key, 'base64').toString()
      const prefix = decoded.slice(44, 48)
      expect(JSON.parse(decoded.slice(48))).toEqual(k.parameters)
      const parents = fake.keys.filter((p) => p.value.startsWith(prefix))
      expect(parents.map((p) => ({ actions: p.actions, collections: p.collections }))).toEqual([
        { actions: ['documents:search'], collections: [k.collection] },
      ])
      expect(prefix).not.toBe(SEARCH_KEY.slice(0, 4))
    }
    const brands = keys.find((k) => k.type === 'brand')!
    // the brands key embeds no filter: its parent is what keeps it on the brands collection
    expect(brands.parameters.filter_by).toBeUndefined()
    expect((await searchWith(brands.key, 'brands')).status).toBe(200)
    const leak = await searchWith(brands.key, 'retailers')
    expect(leak.status).toBe(401)
    expect(JSON.stringify(leak.json)).not.toContain('Hidden Wholesale Partner')
    expect((await searchWith(brands.key, 'products')).status).toBe(401)
    // the retailers key reads its collection through its filter: the hidden retailer stays hidden
    const retailers = keys.find((k) => k.type === 'retailer')!
    const found = await searchWith(retailers.key, 'retailers', 'is_active:=[true,false]')
    expect(found.status).toBe(200)
    expect(found.json.results[0].hits).toEqual([])
    // the unfiltered index holds it (what a key without its parent's restriction would read)
    const all = await searchWith(ADMIN_KEY, 'retailers')
    expect(all.json.results[0].hits.map((h: any) => h.document.id)).toEqual(['r-private'])
  })
})
