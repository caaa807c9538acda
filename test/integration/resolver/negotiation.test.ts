import { beforeAll, describe, expect, test } from 'bun:test'
import { createOrganization, type TestOrg, tableCounts } from '../../support/fixtures'
import { get } from '../../support/server'
import { createRule, ownedProduct } from './support'

// Issue 46: content negotiation (GS1 Conformant Resolver 1.2): links of one type are told apart by
// the request's Accept-Language against their hreflang and its Accept against their type; 300 only
// for a tie the request cannot break.

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

const VOC = 'https://gs1.org/voc/'
const location = (res: { headers: Headers }) => res.headers.get('location')

/** A product with the given rules (PRODUCT scope). */
async function productWith(rules: Record<string, unknown>[]) {
  const p = await ownedProduct(org)
  for (const rule of rules) await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, ...rule })
  return p
}

describe('content negotiation', () => {
  test('Accept-Language picks among gs1:pip links by hreflang; no language that helps leaves the tie (300)', async () => {
    const p = await productWith([
      { link_type: 'gs1:pip', custom_url: 'https://pip.example/en', hreflang: ['en'] },
      { link_type: 'gs1:pip', custom_url: 'https://pip.example/fr', hreflang: ['fr'] },
    ])
    const before = await tableCounts()
    const path = `/01/${p.gtin}?linkType=gs1:pip`
    for (const [language, target] of [
      ['fr', 'https://pip.example/fr'],
      ['en', 'https://pip.example/en'],
      ['fr-CA,fr;q=0.9,en;q=0.5', 'https://pip.example/fr'],
      ['de, en;q=0.3, fr;q=0.2', 'https://pip.example/en'],
      // equal weights: the order the client wrote them in
      ['en, fr', 'https://pip.example/en'],
    ] as const) {
      const res = await get(path, undefined, { 'accept-language': language })
      expect({ language, status: res.status, location: location(res) }).toEqual({
        language,
        status: 307,
        location: target,
      })
      expect(res.headers.get('vary')).toContain('Accept-Language')
    }
    // nothing, a language no link has, or any language: the request cannot choose
    for (const language of [undefined, 'de', '*']) {
      const res = await get(path, undefined, language ? { 'accept-language': language } : {})
      expect({ language, status: res.status }).toEqual({ language, status: 300 })
      const hrefs = res.json.linkset[0][`${VOC}pip`].map((l: { href: string }) => l.href).sort()
      expect(hrefs).toEqual(['https://pip.example/en', 'https://pip.example/fr'])
    }
    expect(await tableCounts()).toEqual(before)
  })

  test('Accept picks among links by their media type; */* cannot choose', async () => {
    const p = await productWith([
      { link_type: 'gs1:instructions', custom_url: 'https://manual.example/page', media_type: 'text/html' },
      { link_type: 'gs1:instructions', custom_url: 'https://manual.example/manual.pdf', media_type: 'application/pdf' },
    ])
    const path = `/01/${p.gtin}?linkType=gs1:instructions`
    for (const [accept, target] of [
      ['application/pdf', 'https://manual.example/manual.pdf'],
      ['text/html', 'https://manual.example/page'],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'https://manual.example/page'],
      ['application/*', 'https://manual.example/manual.pdf'],
    ] as const) {
      const res = await get(path, undefined, { accept })
      expect({ accept, status: res.status, location: location(res) }).toEqual({ accept, status: 307, location: target })
    }
    expect((await get(path, undefined, { accept: '*/*' })).status).toBe(300)
  })

  test('language first, then media type, then order_index', async () => {
    const p = await productWith([
      { link_type: 'gs1:pip', custom_url: 'https://both.example/en.html', hreflang: ['en'], order_index: 0 },
      { link_type: 'gs1:pip', custom_url: 'https://both.example/fr.html', hreflang: ['fr'], order_index: 1 },
      {
        link_type: 'gs1:pip',
        custom_url: 'https://both.example/fr.pdf',
        hreflang: ['fr'],
        media_type: 'application/pdf',
        order_index: 2,
      },
    ])
    const path = `/01/${p.gtin}?linkType=gs1:pip`
    // no preference: the lowest order_index, as before
    expect(location(await get(path))).toBe('https://both.example/en.html')
    // French: the French links, and of those the first in order
    expect(location(await get(path, undefined, { 'accept-language': 'fr' }))).toBe('https://both.example/fr.html')
    expect(location(await get(path, undefined, { 'accept-language': 'fr', accept: 'application/pdf' }))).toBe(
      'https://both.example/fr.pdf',
    )
    // a PDF in any language: the only PDF
    expect(location(await get(path, undefined, { accept: 'application/pdf' }))).toBe('https://both.example/fr.pdf')
  })

  test('the default link is negotiated the same way; a plain request with tied defaults is 300', async () => {
    const p = await productWith([
      { custom_url: 'https://default.example/en', hreflang: ['en'], title: 'Home' },
      { custom_url: 'https://default.example/fr', hreflang: ['fr'], title: 'Accueil' },
    ])
    const fr = await get(`/01/${p.gtin}`, undefined, { 'accept-language': 'fr-FR, fr;q=0.9' })
    expect(fr.status).toBe(307)
    expect(location(fr)).toBe('https://default.example/fr')
    const tie = await get(`/01/${p.gtin}`)
    expect(tie.status).toBe(300)
    expect(tie.json.linkset[0].itemDescription).toBe('Resolver test product')
    expect(tie.json.linkset[0][`${VOC}defaultLinkMulti`].map((l: { href: string }) => l.href).sort()).toEqual([
      'https://default.example/en',
      'https://default.example/fr',
    ])
  })

  test('the most specific scope still wins over a better language elsewhere', async () => {
    const p = await productWith([{ link_type: 'gs1:pip', custom_url: 'https://scope.example/fr', hreflang: ['fr'] }])
    await createRule(org, {
      scope_type: 'BATCH',
      product_id: p.id,
      scope_id: 'LOT1',
      link_type: 'gs1:pip',
      custom_url: 'https://scope.example/lot-en',
      hreflang: ['en'],
    })
    const res = await get(`/01/${p.gtin}/10/LOT1?linkType=gs1:pip`, undefined, { 'accept-language': 'fr' })
    expect(location(res)).toBe('https://scope.example/lot-en')
  })
})
