/// <reference path="../../../src/shared/digital-link-toolkit.d.ts" />
import { beforeAll, describe, expect, test } from 'bun:test'
import GS1DigitalLinkToolkit from 'digital-link.js/lib/GS1DigitalLinkCompressionPrototype/GS1DigitalLinkToolkit.js'
import { createOrganization, expectProblem, PRODUCTS, type TestOrg, tableCounts } from '../../support/fixtures'
import { baseUrl, call, get, post } from '../../support/server'
import { createRule, ownedProduct } from './support'

// Issue 46: the other forms of a Digital Link URI are the same resource (GS1 Conformant Resolver 1.2):
// a compressed URI (GS1 Digital Link URI Syntax §7) and a trailing slash, OPTIONS included.

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

const LINKSET = 'application/linkset+json'

/** GS1's example: `/AQEd-0_ymA` is the compressed `/01/00614141000012`. */
const COMPRESSED = '/AQEd-0_ymA'
const GTIN = '00614141000012'

describe('compressed Digital Link URIs', () => {
  let productId = ''
  beforeAll(async () => {
    const created = await post(PRODUCTS, { gtin: GTIN, product_name: 'Compressed' }, org.key)
    expect(created.status).toBe(201)
    productId = created.json.id
    await createRule(org, { scope_type: 'PRODUCT', product_id: productId, custom_url: 'https://compressed.example/' })
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: productId,
      link_type: 'gs1:pip',
      custom_url: 'https://compressed.example/pip',
    })
  })

  test('a compressed URI answers as its uncompressed form: redirect, Link header, query passed on', async () => {
    const before = await tableCounts()
    const plain = await get(`/01/${GTIN}?utm_source=pack`)
    const compressed = await get(`${COMPRESSED}?utm_source=pack`)
    expect(plain.status).toBe(307)
    expect(compressed.status).toBe(307)
    expect(compressed.headers.get('location')).toBe('https://compressed.example/?utm_source=pack')
    expect(compressed.headers.get('location')).toBe(plain.headers.get('location'))
    // the linkset is named by the uncompressed, canonical URI
    expect(compressed.headers.get('link')).toBe(
      `<${baseUrl}/01/${GTIN}?linkType=linkset>; rel="linkset"; type="${LINKSET}"`,
    )
    expect(compressed.headers.get('access-control-allow-origin')).toBe('*')
    const typed = await get(`${COMPRESSED}?linkType=gs1:pip`)
    expect(typed.status).toBe(307)
    expect(typed.headers.get('location')).toBe('https://compressed.example/pip')
    expect(await tableCounts()).toEqual(before)
  })

  test('the linkset, explain, a trailing slash and HEAD of a compressed URI', async () => {
    const linkset = await get(`${COMPRESSED}?linkType=linkset`)
    expect(linkset.status).toBe(200)
    expect(linkset.headers.get('content-type')).toBe(LINKSET)
    expect(linkset.json).toEqual((await get(`/01/${GTIN}?linkType=linkset`)).json)
    expect(linkset.json.linkset[0].anchor).toBe(`${baseUrl}/01/${GTIN}`)
    const explained = await get(`${COMPRESSED}?explain=1`)
    expect(explained.status).toBe(200)
    expect(explained.json.request).toMatchObject({ gtin: GTIN, lot: null, serial: null })
    const slash = await get(`${COMPRESSED}/`)
    expect(slash.status).toBe(307)
    expect(slash.headers.get('location')).toBe('https://compressed.example/')
    const head = await call('HEAD', COMPRESSED)
    expect(head.status).toBe(307)
    expect(head.headers.get('location')).toBe('https://compressed.example/')
  })

  test('a compressed URI with a lot, a serial and data attributes reads them all', async () => {
    const p = await ownedProduct(org)
    await createRule(org, {
      scope_type: 'SERIAL',
      product_id: p.id,
      scope_id: 'S/1',
      custom_url: 'https://serial.example/',
    })
    // compressed with GS1's toolkit (shipped in digital-link.js)
    const toolkit = new GS1DigitalLinkToolkit() as { compressGS1DigitalLink(...args: unknown[]): string }
    const uncompressed = `https://id.gs1.org/01/${p.gtin}/10/LOT-7/21/S%2F1?17=291231`
    const uri = toolkit.compressGS1DigitalLink(uncompressed, false, 'https://id.gs1.org', false, true, true)
    const segment = new URL(uri).pathname
    expect(segment).toMatch(/^\/[A-Za-z0-9_-]+$/)
    const explained = await get(`${segment}?explain=1`)
    expect(explained.status).toBe(200)
    expect(explained.json.request).toMatchObject({ gtin: p.gtin, lot: 'LOT-7', serial: 'S/1' })
    const res = await get(segment)
    expect(res.status).toBe(307)
    expect(res.headers.get('location')).toBe('https://serial.example/?17=291231')
    expect(res.headers.get('link')).toStartWith(`<${baseUrl}/01/${p.gtin}/10/LOT-7/21/S%2F1?linkType=linkset>`)
  })

  test('a segment that is no compressed URI of a GTIN is an unknown path (404), as before', async () => {
    const before = await tableCounts()
    // not base64url; base64url that is no compressed element string; a compressed SSCC (AI 00)
    for (const path of ['/favicon.ico', '/no-such-page', '/AA', '/AAAAAAAAAAAAAAAAAAAAAAA'])
      expectProblem(await get(path), 404, 'not_found')
    expect((await get('/healthz')).status).toBe(200)
    // an unknown path with a slash does not redirect to its other form
    expectProblem(await get('/no-such-page/'), 404, 'not_found')
    expect(await tableCounts()).toEqual(before)
  })
})

describe('trailing slash', () => {
  test('OPTIONS with a trailing slash answers as OPTIONS without it (no 308)', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://slash.example/' })
    const preflight = { origin: 'https://app.example', 'access-control-request-method': 'GET' }
    for (const tail of ['', '/10/LOT1']) {
      const bare = await call('OPTIONS', `/01/${p.gtin}${tail}`, { headers: preflight })
      const slash = await call('OPTIONS', `/01/${p.gtin}${tail}/`, { headers: preflight })
      expect(slash.status).toBe(204)
      expect(slash.headers.get('location')).toBeNull()
      for (const header of ['link', 'access-control-allow-origin', 'access-control-allow-methods', 'allow'])
        expect({ header, value: slash.headers.get(header) }).toEqual({ header, value: bare.headers.get(header) })
      expect(slash.headers.get('link')).toBe(
        `<${baseUrl}/01/${p.gtin}${tail}?linkType=linkset>; rel="linkset"; type="${LINKSET}"`,
      )
    }
  })
})
