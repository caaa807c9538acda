import { beforeAll, describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { get, post } from '../../support/server'
import { ownedProduct, rulesPath } from './support'

// Issue 46: link types come from the current GS1 Web Vocabulary (a vendored extract of 1.16), not
// from an old library's list: the eight ratified types it lacked are accepted on rules and queries.

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

const RATIFIED_SINCE = [
  'gs1:dpp',
  'gs1:eifu',
  'gs1:appDownload',
  'gs1:backgroundInfo',
  'gs1:loyaltyProgram',
  'gs1:relatedImage',
  'gs1:reportFound',
  'gs1:subscribe',
]

describe('GS1 Web Vocabulary link types', () => {
  test('the eight link types ratified since digital-link.js are accepted on rules and resolved', async () => {
    const p = await ownedProduct(org)
    for (const linkType of RATIFIED_SINCE) {
      const term = linkType.slice(4)
      const res = await post(
        rulesPath(org),
        { scope_type: 'PRODUCT', product_id: p.id, link_type: linkType, custom_url: `https://types.example/${term}` },
        org.key,
      )
      expect({ linkType, status: res.status }).toEqual({ linkType, status: 201 })
      expect(res.json.link_type).toBe(linkType)
      for (const asked of [linkType, `https://gs1.org/voc/${term}`, `https://ref.gs1.org/voc/${term}`]) {
        const scan = await get(`/01/${p.gtin}?linkType=${encodeURIComponent(asked)}`)
        expect({ asked, status: scan.status, location: scan.headers.get('location') }).toEqual({
          asked,
          status: 307,
          location: `https://types.example/${term}`,
        })
      }
    }
    const stored = await sql<{ link_type: string }>(
      `select r.link_type from resolution_rules r join products p on p.id = r.product_id where p.gtin = $1 order by r.created, r.id`,
      [p.gtin],
    )
    expect(stored.map((r) => r.link_type)).toEqual(RATIFIED_SINCE)
  })

  test('a link type the vocabulary does not have is still refused on a rule, nothing stored', async () => {
    const p = await ownedProduct(org)
    const res = await post(
      rulesPath(org),
      { scope_type: 'PRODUCT', product_id: p.id, link_type: 'gs1:nosuchlt', custom_url: 'https://types.example/x' },
      org.key,
    )
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe('link_type')
    const [row] = await sql<{ n: number }>(
      'select count(*)::int n from resolution_rules r join products p on p.id = r.product_id where p.gtin = $1',
      [p.gtin],
    )
    expect(row!.n).toBe(0)
  })
})
