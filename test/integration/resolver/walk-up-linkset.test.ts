import { beforeAll, describe, expect, test } from 'bun:test'
import { createOrganization, type TestOrg, tableCounts } from '../../support/fixtures'
import { baseUrl, get } from '../../support/server'
import { createRule, ownedProduct } from './support'

// Issue 46: the linkset walks up (GS1 Conformant Resolver 1.2): the links of the serial, of the lot
// and of the GTIN, each under its own anchor; exactly one default link, with a title only; tied
// default links all listed (gs1:defaultLinkMulti).

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

const VOC = 'https://gs1.org/voc/'

describe('walk-up linkset', () => {
  test('the linkset of /01/…/10/LOT1/21/SN1 has the serial’s, the lot’s and the product’s links', async () => {
    const p = await ownedProduct(org)
    const product = { scope_type: 'PRODUCT', product_id: p.id }
    await createRule(org, { ...product, custom_url: 'https://walk.example/', title: 'Home', hreflang: ['fr'] })
    await createRule(org, { ...product, link_type: 'gs1:pip', custom_url: 'https://walk.example/pip' })
    await createRule(org, { ...product, link_type: 'gs1:traceability', custom_url: 'https://walk.example/trace' })
    await createRule(org, {
      scope_type: 'BATCH',
      product_id: p.id,
      scope_id: 'LOT1',
      link_type: 'gs1:traceability',
      custom_url: 'https://walk.example/lots/LOT1',
    })
    await createRule(org, {
      scope_type: 'SERIAL',
      product_id: p.id,
      scope_id: 'SN1',
      link_type: 'gs1:registerProduct',
      custom_url: 'https://walk.example/register/SN1',
      media_type: 'application/json',
    })
    const before = await tableCounts()
    const res = await get(`/01/${p.gtin}/10/LOT1/21/SN1?linkType=linkset`)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      linkset: [
        {
          anchor: `${baseUrl}/01/${p.gtin}/10/LOT1/21/SN1`,
          itemDescription: 'Resolver test product, serial number SN1',
          [`${VOC}registerProduct`]: [
            {
              href: 'https://walk.example/register/SN1',
              title: 'Register product',
              type: 'application/json',
              hreflang: ['en'],
            },
          ],
        },
        {
          anchor: `${baseUrl}/01/${p.gtin}/10/LOT1`,
          itemDescription: 'Resolver test product, lot LOT1',
          [`${VOC}traceability`]: [
            { href: 'https://walk.example/lots/LOT1', title: 'Traceability', type: 'text/html', hreflang: ['en'] },
          ],
        },
        {
          anchor: `${baseUrl}/01/${p.gtin}`,
          itemDescription: 'Resolver test product',
          // the default link: a title and nothing else
          [`${VOC}defaultLink`]: [{ href: 'https://walk.example/', title: 'Home' }],
          [`${VOC}pip`]: [
            {
              href: 'https://walk.example/pip',
              title: 'Product information page',
              type: 'text/html',
              hreflang: ['en'],
            },
          ],
          [`${VOC}traceability`]: [
            { href: 'https://walk.example/trace', title: 'Traceability', type: 'text/html', hreflang: ['en'] },
          ],
        },
      ],
    })
    // each level's links are what a request for that link type gets there
    expect((await get(`/01/${p.gtin}/10/LOT1/21/SN1?linkType=gs1:traceability`)).headers.get('location')).toBe(
      'https://walk.example/lots/LOT1',
    )
    expect((await get(`/01/${p.gtin}/10/LOT1/21/SN1`)).headers.get('location')).toBe('https://walk.example/')
    // a lot nobody named has the product's links only
    const other = await get(`/01/${p.gtin}/10/LOT9?linkType=linkset`)
    expect(other.json.linkset.map((o: { anchor: string }) => o.anchor)).toEqual([`${baseUrl}/01/${p.gtin}`])
    expect(await tableCounts()).toEqual(before)
  })

  test('a serial with its own default link: each level names its own, one each', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://own.example/product' })
    await createRule(org, {
      scope_type: 'SERIAL',
      product_id: p.id,
      scope_id: 'SN2',
      custom_url: 'https://own.example/serial',
    })
    const res = await get(`/01/${p.gtin}/21/SN2?linkType=linkset`)
    const [serial, product] = res.json.linkset
    expect(serial[`${VOC}defaultLink`]).toEqual([{ href: 'https://own.example/serial', title: 'Default link' }])
    expect(product[`${VOC}defaultLink`]).toEqual([{ href: 'https://own.example/product', title: 'Default link' }])
    expect((await get(`/01/${p.gtin}/21/SN2`)).headers.get('location')).toBe('https://own.example/serial')
  })

  test('tied default links: one gs1:defaultLink, both as gs1:defaultLinkMulti, and the plain request is 300', async () => {
    const p = await ownedProduct(org)
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://tied.example/one' })
    await createRule(org, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://tied.example/two' })
    const linkset = await get(`/01/${p.gtin}?linkType=linkset`)
    const [object] = linkset.json.linkset
    expect(object[`${VOC}defaultLink`]).toEqual([{ href: 'https://tied.example/one', title: 'Default link' }])
    expect(object[`${VOC}defaultLinkMulti`].map((l: { href: string }) => l.href)).toEqual([
      'https://tied.example/one',
      'https://tied.example/two',
    ])
    const plain = await get(`/01/${p.gtin}`)
    expect(plain.status).toBe(300)
    expect(plain.json.linkset[0][`${VOC}defaultLinkMulti`]).toEqual(object[`${VOC}defaultLinkMulti`])
  })
})
