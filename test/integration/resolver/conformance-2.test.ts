import { beforeAll, describe, expect, test } from 'bun:test'
import {
  createOrganization,
  expectProblem,
  PRODUCTS,
  sql,
  type TestOrg,
  tableCounts,
  uniqueGtin,
} from '../../support/fixtures'
import { baseUrl, call, get, post } from '../../support/server'
import { createRule, ownedProduct } from './support'

// Issue 46, the resolver's conformance items that need no outside data (GS1 Conformant Resolver 1.2).

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

const LINKSET = 'application/linkset+json'
const VOC = 'https://gs1.org/voc/'
const CONTEXT_LINK = `<${VOC}?show=linktypes>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`

/** A product with a default link and a gs1:pip link. */
async function linkedProduct() {
  const p = await ownedProduct(org)
  await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://conf.example/default' })
  await createRule(org, {
    scope_type: 'PRODUCT',
    product_id: p.id,
    link_type: 'gs1:pip',
    custom_url: 'https://conf.example/pip',
  })
  return p
}

describe('resolver conformance, second pass', () => {
  test('the linkset carries itemDescription (the product name) and the JSON-LD context Link header', async () => {
    const p = await linkedProduct()
    const res = await get(`/01/${p.gtin}?linkType=linkset`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(LINKSET)
    expect(res.json.linkset[0].itemDescription).toBe('Resolver test product')
    expect(res.json.linkset[0].anchor).toBe(`${baseUrl}/01/${p.gtin}`)
    const links = (res.headers.get('link') ?? '').split(/,\s*(?=<)/)
    expect(links).toContain(CONTEXT_LINK)
    // the same by Accept
    const accepted = await get(`/01/${p.gtin}`, undefined, { accept: LINKSET })
    expect(accepted.json.linkset[0].itemDescription).toBe('Resolver test product')
    expect((accepted.headers.get('link') ?? '').split(/,\s*(?=<)/)).toContain(CONTEXT_LINK)
  })

  test('a product with no name is described by its GTIN', async () => {
    const other = await createOrganization()
    const created = await post(PRODUCTS, { gtin: uniqueGtin() }, other.key)
    expect(created.status).toBe(201)
    const [row] = await sql<{ product_name: string }>('select product_name from products where gtin = $1', [
      created.json.gtin,
    ])
    expect(row!.product_name).toBe('')
    await createRule(other, {
      scope_type: 'PRODUCT',
      product_id: created.json.id,
      custom_url: 'https://noname.example/',
    })
    const res = await get(`/01/${created.json.gtin}?linkType=linkset`)
    expect(res.status).toBe(200)
    expect(res.json.linkset[0].itemDescription).toBe(created.json.gtin)
  })

  test('a link type the item does not have is 404, known or not; a full-URI link type is its CURIE', async () => {
    const p = await linkedProduct()
    const before = await tableCounts()
    for (const linkType of ['gs1:nosuchlt', 'gs1:recallStatus', `${VOC}nosuchlt`]) {
      const res = await get(`/01/${p.gtin}?linkType=${encodeURIComponent(linkType)}`)
      expectProblem(res, 404, 'not_found')
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
    }
    const full = await get(`/01/${p.gtin}?linkType=${encodeURIComponent(`${VOC}pip`)}`)
    expect(full.status).toBe(307)
    expect(full.headers.get('location')).toBe('https://conf.example/pip')
    // a value that is no link type at all stays 400
    for (const linkType of ['pip', 'gs1:', 'gs1:has space', 'https://example.com/voc/pip', 'other:pip'])
      expectProblem(await get(`/01/${p.gtin}?linkType=${encodeURIComponent(linkType)}`), 400, 'invalid_digital_link')
    expect(await tableCounts()).toEqual(before)
  })

  test('/.well-known/gs1resolver is readable cross-origin and documented in the OpenAPI document', async () => {
    const res = await get('/.well-known/gs1resolver', undefined, { origin: 'https://suite.example' })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const doc = (await get('/docs/json')).json
    expect(doc.paths['/.well-known/gs1resolver']?.get?.responses?.['200']).toBeDefined()
  })

  test('a trailing slash is served as the same resource, with CORS', async () => {
    const p = await linkedProduct()
    for (const path of [`/01/${p.gtin}/`, `/01/${p.gtin}/10/LOT1/`]) {
      const res = await get(`${path}?x=1`)
      expect({ path, status: res.status, location: res.headers.get('location') }).toEqual({
        path,
        status: 307,
        location: 'https://conf.example/default?x=1',
      })
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
    }
    const linkset = await get(`/01/${p.gtin}/?linkType=linkset`)
    expect(linkset.status).toBe(200)
    expect(linkset.json.linkset[0].anchor).toBe(`${baseUrl}/01/${p.gtin}`)
    // one slash is tolerated, not an empty segment
    expectProblem(await get(`/01/${p.gtin}//`), 400, 'invalid_digital_link')
  })

  test('under /01/ an 8-digit value is a GTIN-8, not a UPC-E', async () => {
    // 10000007 is a valid GTIN-8 and, read as UPC-E, the UPC-A 100000000007 as well
    const gtin8 = '00000010000007'
    const created = await post(PRODUCTS, { gtin: gtin8, product_name: 'Eight' }, org.key)
    expect(created.status).toBe(201)
    await createRule(org, { scope_type: 'PRODUCT', product_id: created.json.id, custom_url: 'https://eight.example/' })
    const res = await get('/01/10000007')
    expect(res.status).toBe(307)
    expect(res.headers.get('location')).toBe('https://eight.example/')
    expect((await get('/01/10000007?explain=1')).json.request.gtin).toBe(gtin8)
  })

  test("the query string's data attributes are checked: format, and no second primary key", async () => {
    const p = await linkedProduct()
    const before = await tableCounts()
    for (const [query, ai] of [
      ['17=99AB12', '17'],
      ['3103=12', '3103'],
      ['414=9521141123454', '414'],
      ['17=261231&00=123456789012345675', '00'],
      ['10=LOT1', '10'],
    ] as const) {
      const res = await get(`/01/${p.gtin}?${query}`)
      expectProblem(res, 400, 'invalid_digital_link')
      expect(res.json.detail).toContain(`(${ai})`)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
    }
    // valid data attributes and other parameters are passed on as before
    const ok = await get(`/01/${p.gtin}?17=261231&3103=000125&utm_source=pack`)
    expect(ok.status).toBe(307)
    expect(ok.headers.get('location')).toBe('https://conf.example/default?17=261231&3103=000125&utm_source=pack')
    expect(await tableCounts()).toEqual(before)
  })

  test('OPTIONS on a resolver path carries the Link header a GET would', async () => {
    const p = await linkedProduct()
    const res = await call('OPTIONS', `/01/${p.gtin}/10/LOT1`, {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('link')).toBe(
      `<${baseUrl}/01/${p.gtin}/10/LOT1?linkType=linkset>; rel="linkset"; type="${LINKSET}"`,
    )
    const scan = await get(`/01/${p.gtin}/10/LOT1`)
    expect(scan.headers.get('link')).toBe(res.headers.get('link'))
  })
})
