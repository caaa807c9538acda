import { beforeAll, describe, expect, test } from 'bun:test'
import { db } from '../../../src/db/client'
import { createRule as createRuleService } from '../../../src/resolver/rules'
import { parseId } from '../../../src/shared/ids'
import {
  createOrganization,
  eventually,
  expectProblem,
  ORGS,
  PRODUCTS,
  type TestOrg,
  uniqueGtin,
} from '../../support/fixtures'
import { baseUrl, call, del, get, patch, post } from '../../support/server'
import { createRule, ownedProduct, rulesPath } from './support'

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

const LINKSET = 'application/linkset+json'
const VOC = 'https://gs1.org/voc/'
const location = (res: { headers: Headers }) => res.headers.get('location')

describe('resolving: redirects and GTIN forms', () => {
  test('307 to the default link, with a linkset Link header and open CORS; any GTIN form', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/product' })
    const res = await get(`/01/${p.gtin}`)
    expect(res.status).toBe(307)
    expect(location(res)).toBe('https://brand.example/product')
    expect(res.headers.get('link')).toBe(`<${baseUrl}/01/${p.gtin}?linkType=linkset>; rel="linkset"; type="${LINKSET}"`)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    // the fast path builds its own response: the request id is on it, once
    const traced = await get(`/01/${p.gtin}`, undefined, { 'x-request-id': 'scan-trace-1' })
    expect(traced.status).toBe(307)
    expect(traced.headers.get('x-request-id')).toBe('scan-trace-1')
    expect(traced.headers.get('location')).toBe('https://brand.example/product')
    // the GTIN-13 form (and with separators) resolves the same product
    expect(location(await get(`/01/${p.gtin.slice(1)}`))).toBe('https://brand.example/product')
    const head = await call('HEAD', `/01/${p.gtin}`)
    expect(head.status).toBe(307)
    expect(head.text).toBe('')
  })

  test('an unknown GTIN is 404; a product with no rule holding is 404; all with CORS', async () => {
    const unknown = await get(`/01/${uniqueGtin()}`, undefined, { 'x-request-id': 'scan-trace-2' })
    expectProblem(unknown, 404, 'not_found')
    expect(unknown.headers.get('x-request-id')).toBe('scan-trace-2')
    expect(unknown.json.request_id).toBe('scan-trace-2')
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*')
    const bare = await ownedProduct(org)
    expectProblem(await get(`/01/${bare.gtin}`), 404, 'not_found')
  })

  test('malformed URIs are 400 invalid_digital_link', async () => {
    const p = await ownedProduct(org)
    const wrongCheck = `${p.gtin.slice(0, 13)}${(Number(p.gtin[13]) + 1) % 10}`
    for (const path of [
      `/01/${wrongCheck}`,
      '/01/abc',
      '/01/123456789',
      `/01/${p.gtin}/21/S1/10/L1`,
      `/01/${p.gtin}/10/L1/10/L2`,
      `/01/${p.gtin}/99/X`,
      `/01/${p.gtin}/10`,
      `/01/${p.gtin}/10/${'L'.repeat(21)}`,
      `/01/${p.gtin}/10/a%20b`,
      `/01/${p.gtin}/235/T1/10/L1`,
    ]) {
      const res = await get(path)
      expect({ path, status: res.status, code: res.json?.code }).toEqual({
        path,
        status: 400,
        code: 'invalid_digital_link',
      })
    }
    // a link type of no link type's form (issue 46: a well-formed unknown one is 404, conformance-2.test.ts)
    expectProblem(await get(`/01/${p.gtin}?linkType=nope`), 400, 'invalid_digital_link')
    // a path that does not decode to text is refused at the edge, as on every route
    expectProblem(await get(`/01/${p.gtin}/10/%E0%A4%A`), 422, 'validation_error')
    expectProblem(await get(`/01/${p.gtin}?utm=%00`), 422, 'validation_error')
    // the edge's other limits hold on scans too, served outside the app's hooks (431: test/e2e/startup)
    expectProblem(await get(`/01/${p.gtin}?q=${'x'.repeat(9000)}`), 414, 'uri_too_long')
    expectProblem(await get(`/01/${p.gtin}`, 'not-a-key'), 401, 'unauthenticated')
    const post = await call('POST', `/01/${p.gtin}`, { body: {} })
    expectProblem(post, 405, 'method_not_allowed')
  })

  test('a keyed scan: a known key is served from the key cache; a revoked one is 401 at once', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/keyed' })
    const created = await post(`${ORGS}/${org.id}/api-keys`, { name: 'scanner', role: 'readonly' }, org.key)
    const { id, key } = created.json
    for (let i = 0; i < 2; i++) {
      const res = await get(`/01/${p.gtin}`, key)
      expect({ status: res.status, location: location(res) }).toEqual({
        status: 307,
        location: 'https://brand.example/keyed',
      })
    }
    expect((await del(`${ORGS}/${org.id}/api-keys/${id}`, org.key)).status).toBe(204)
    const refused = await get(`/01/${p.gtin}`, key)
    expectProblem(refused, 401, 'unauthenticated')
    expect(refused.headers.get('access-control-allow-origin')).toBe('*')
    // the edge's refusals on a scan are readable cross-origin too
    const long = await get(`/01/${p.gtin}?q=${'x'.repeat(9000)}`)
    expectProblem(long, 414, 'uri_too_long')
    expect(long.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('a trailing slash is the same resource (contract §2: the resolver paths excepted from the 308)', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://brand.example/slash' })
    const res = await get(`/01/${p.gtin}/?x=1`)
    expect(res.status).toBe(307)
    expect(location(res)).toBe('https://brand.example/slash?x=1')
  })

  test('CORS preflight answers 204 for GET, HEAD and OPTIONS', async () => {
    const res = await call('OPTIONS', `/01/${uniqueGtin()}`, {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
  })
})

describe('resolving: choosing', () => {
  test('scope precedence: SERIAL > BATCH > PRODUCT > BRAND > ORGANIZATION; unknown qualifiers walk up', async () => {
    const mine = await createOrganization()
    const p = await ownedProduct(mine, 'Precedence Brand')
    const make = (body: Record<string, unknown>) => createRule(mine, body)
    await make({ scope_type: 'ORGANIZATION', custom_url: 'https://org.example/' })
    const path = `/01/${p.gtin}`
    expect(location(await get(path))).toBe('https://org.example/')
    await make({ scope_type: 'BRAND', scope_id: p.brandId, custom_url: 'https://brand.example/' })
    expect(location(await get(path))).toBe('https://brand.example/')
    await make({ scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://product.example/' })
    expect(location(await get(path))).toBe('https://product.example/')
    await make({ scope_type: 'BATCH', product_id: p.id, scope_id: 'L1', custom_url: 'https://lot.example/' })
    await make({ scope_type: 'SERIAL', product_id: p.id, scope_id: 'S1', custom_url: 'https://serial.example/' })
    expect(location(await get(`${path}/10/L1`))).toBe('https://lot.example/')
    expect(location(await get(`${path}/10/L1/21/S1`))).toBe('https://serial.example/')
    expect(location(await get(`${path}/21/S1`))).toBe('https://serial.example/')
    // a lot, serial or variant no rule names resolves as the product, not 404
    expect(location(await get(`${path}/10/L2`))).toBe('https://product.example/')
    expect(location(await get(`${path}/10/L2/21/S9`))).toBe('https://product.example/')
    expect(location(await get(`${path}/22/V1/10/L1`))).toBe('https://lot.example/')
    expect(location(await get(`${path}/235/TPX1`))).toBe('https://product.example/')
    expect(location(await get(path))).toBe('https://product.example/')
  })

  test('order_index: lowest first; a tie with different targets is 300 with the choices as a linkset', async () => {
    const p = await ownedProduct(org)
    const second = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 2,
      custom_url: 'https://two.example/',
    })
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 1,
      custom_url: 'https://one.example/',
    })
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://one.example/')
    await patch(`${rulesPath(org)}/${second.id}`, { order_index: 1 }, org.key)
    const tie = await get(`/01/${p.gtin}`)
    expect(tie.status).toBe(300)
    expect(tie.headers.get('content-type')).toBe(LINKSET)
    expect(location(tie)).toBeNull()
    const choices = tie.json.linkset[0][`${VOC}defaultLinkMulti`].map((l: { href: string }) => l.href).sort()
    expect(choices).toEqual(['https://one.example/', 'https://two.example/'])
  })

  test('linkType: the requested type, 404 when no rule offers it; the default ignores typed rules when a default exists', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://default.example/' })
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      link_type: 'gs1:allergenInfo',
      custom_url: 'https://allergens.example/',
    })
    expect(location(await get(`/01/${p.gtin}?linkType=gs1:allergenInfo`))).toBe('https://allergens.example/')
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://default.example/')
    expectProblem(await get(`/01/${p.gtin}?linkType=gs1:recallStatus`), 404, 'not_found')
  })

  test('query passed on (less the resolver’s own), section_anchor as the fragment', async () => {
    const p = await ownedProduct(org)
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      link_type: 'gs1:pip',
      custom_url: 'https://shop.example/item?ref=qr#old',
      section_anchor: 'nutrition',
    })
    const res = await get(`/01/${p.gtin}?linkType=gs1:pip&utm_source=pack&country=US&lang=fr`)
    expect(res.text).toBe('')
    expect(location(res)).toBe('https://shop.example/item?ref=qr&utm_source=pack&lang=fr#nutrition')
  })

  test('place from the query override, else the CF-IPCountry / region / city headers', async () => {
    const p = await ownedProduct(org)
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      location_regions: ['US-CA'],
      custom_url: 'https://california.example/',
    })
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 1,
      custom_url: 'https://rest.example/',
    })
    expect(location(await get(`/01/${p.gtin}?country=US&region=US-CA`))).toBe('https://california.example/')
    expect(location(await get(`/01/${p.gtin}?country=us&region=CA`))).toBe('https://california.example/')
    expect(location(await get(`/01/${p.gtin}`, undefined, { 'cf-ipcountry': 'US', 'cf-region-code': 'CA' }))).toBe(
      'https://california.example/',
    )
    expect(location(await get(`/01/${p.gtin}`, undefined, { 'cf-ipcountry': 'US', 'cf-region-code': 'NY' }))).toBe(
      'https://rest.example/',
    )
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://rest.example/')
  })

  test('absolute windows against the real clock; disabled rules do not apply', async () => {
    const p = await ownedProduct(org)
    const hour = 3600_000
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      absolute_start_at: new Date(Date.now() + hour).toISOString(),
      custom_url: 'https://future.example/',
    })
    const off = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 1,
      enabled: false,
      custom_url: 'https://off.example/',
    })
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 2,
      custom_url: 'https://now.example/',
    })
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://now.example/')
    await patch(`${rulesPath(org)}/${off.id}`, { enabled: true }, org.key)
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://off.example/')
    await del(`${rulesPath(org)}/${off.id}`, org.key)
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://now.example/')
  })

  test("another organization's rules never apply to a product it does not hold", async () => {
    const other = await createOrganization()
    await createRule(other, { scope_type: 'ORGANIZATION', custom_url: 'https://other.example/' })
    const p = await ownedProduct(org)
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 5,
      custom_url: 'https://mine.example/',
    })
    expect(location(await get(`/01/${p.gtin}`))).toBe('https://mine.example/')
  })
})

describe('resolving: linksets and explain', () => {
  test('linkType=linkset, =all and Accept: application/linkset+json answer the RFC 9264 linkset', async () => {
    const mine = await createOrganization()
    const p = await ownedProduct(mine)
    await createRule(mine, { scope_type: 'ORGANIZATION', custom_url: 'https://org.example/' })
    await createRule(mine, {
      scope_type: 'ORGANIZATION',
      link_type: 'gs1:pip',
      custom_url: 'https://org.example/pip',
    })
    await createRule(mine, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      link_type: 'gs1:pip',
      custom_url: 'https://product.example/pip',
      title: 'Product page',
      hreflang: ['en', 'fr'],
    })
    await createRule(mine, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      link_type: 'gs1:allergenInfo',
      custom_url: 'https://product.example/allergens',
      section_anchor: 'milk',
      media_type: 'application/pdf',
    })
    const res = await get(`/01/${p.gtin}?linkType=linkset`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(LINKSET)
    expect(location(res)).toBeNull()
    expect(res.json).toEqual({
      linkset: [
        {
          anchor: `${baseUrl}/01/${p.gtin}`,
          itemDescription: 'Resolver test product',
          // GS1-Conformant Resolver 1.2: the default link has a title and no other attribute
          [`${VOC}defaultLink`]: [{ href: 'https://org.example/', title: 'Default link' }],
          [`${VOC}allergenInfo`]: [
            {
              href: 'https://product.example/allergens#milk',
              title: 'Allergen info',
              type: 'application/pdf',
              hreflang: ['en'],
            },
          ],
          [`${VOC}pip`]: [
            { href: 'https://product.example/pip', title: 'Product page', type: 'text/html', hreflang: ['en', 'fr'] },
          ],
        },
      ],
    })
    expect((await get(`/01/${p.gtin}?linkType=all`)).json).toEqual(res.json)
    const accepted = await get(`/01/${p.gtin}`, undefined, { accept: LINKSET })
    expect(accepted.status).toBe(200)
    expect(accepted.json).toEqual(res.json)
    // a lot's links are anchored at the lot's URI, as the request wrote the lot
    await createRule(mine, {
      scope_type: 'BATCH',
      product_id: p.id,
      scope_id: 'LOT/7',
      link_type: 'gs1:traceability',
      custom_url: 'https://product.example/lot7',
    })
    expect((await get(`/01/${p.gtin}/10/LOT%2F7?linkType=linkset`)).json.linkset[0].anchor).toBe(
      `${baseUrl}/01/${p.gtin}/10/LOT%2F7`,
    )
  })

  test('linksets carry an ETag and answer 304 to If-None-Match; a change changes the ETag', async () => {
    const p = await ownedProduct(org)
    const rule = await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://e.example/' })
    const first = await get(`/01/${p.gtin}?linkType=linkset`)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^".+"$/)
    const again = await get(`/01/${p.gtin}?linkType=linkset`, undefined, { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    await patch(`${rulesPath(org)}/${rule.id}`, { custom_url: 'https://e2.example/' }, org.key)
    const changed = await get(`/01/${p.gtin}?linkType=linkset`, undefined, { 'if-none-match': etag })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
  })

  test('explain=1 says which scope, rule and condition decided', async () => {
    const p = await ownedProduct(org)
    const weekday = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      location_countries: ['JP'],
      custom_url: 'https://jp.example/',
    })
    const fallback = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      order_index: 1,
      custom_url: 'https://all.example/',
    })
    const res = await get(`/01/${p.gtin}/10/L9?explain=1&country=DE`)
    expect(res.status).toBe(200)
    expect(res.json.request).toMatchObject({ gtin: p.gtin, lot: 'L9', link_type: null, place: { country: 'DE' } })
    expect(res.json.outcome).toEqual({ status: 307 })
    expect(res.json.chosen).toEqual([
      {
        rule_id: fallback.id,
        scope_type: 'PRODUCT',
        order_index: 1,
        link_type: 'gs1:defaultLink',
        target: 'https://all.example/',
      },
    ])
    expect(res.json.considered).toEqual([
      {
        rule_id: weekday.id,
        scope_type: 'PRODUCT',
        order_index: 0,
        link_type: 'gs1:defaultLink',
        holds: false,
        failed_condition: 'location_countries',
      },
      {
        rule_id: fallback.id,
        scope_type: 'PRODUCT',
        order_index: 1,
        link_type: 'gs1:defaultLink',
        holds: true,
        failed_condition: null,
      },
    ])
  })

  test('/.well-known/gs1resolver describes the resolver', async () => {
    const res = await get('/.well-known/gs1resolver')
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      resolverRoot: baseUrl,
      supportedPrimaryKeys: ['01'],
      supportedLinkType: [{ namespace: VOC, prefix: 'gs1:' }],
      linkTypeDefaultCanBeLinkset: false,
    })
  })
})

describe('resolving: the in-memory index follows changes', () => {
  test('a rule written without this process applying it arrives through its event (outbox, NOTIFY)', async () => {
    const p = await ownedProduct(org)
    // the service alone: no route, so nothing reloads this process's index but the event consumer
    await createRuleService(db, parseId(org.id)!, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      custom_url: 'https://via-events.example/',
    })
    const res = await eventually(async () => {
      const r = await get(`/01/${p.gtin}`)
      return r.status === 307 ? r : null
    })
    expect(location(res)).toBe('https://via-events.example/')
  })

  test('a GTIN scanned before its product exists resolves once the product is made (product event, NOTIFY)', async () => {
    const late = await createOrganization()
    await createRule(late, { scope_type: 'ORGANIZATION', custom_url: 'https://late-product.example/' })
    const gtin = uniqueGtin()
    // the index now keeps "no such product" for this GTIN; only the product's event clears it
    expect((await get(`/01/${gtin}`)).status).toBe(404)
    expect((await post(PRODUCTS, { gtin, product_name: 'Late product' }, late.key)).status).toBe(201)
    const res = await eventually(async () => {
      const r = await get(`/01/${gtin}`)
      return r.status === 307 ? r : null
    })
    expect(location(res)).toBe('https://late-product.example/')
  })
})
