import { beforeAll, describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, PRODUCTS, type TestOrg, tableCounts } from '../../support/fixtures'
import { get, post } from '../../support/server'

// Issue 46: the example URIs of GS1's Digital Link toolkit package (the URIs of digital-link.js's
// own tests), read by our resolver as GS1 reads them. The expectations below are data we derived by
// running each URI through GS1's tools (the ABNF grammar validator of digital-link.js for validity,
// GS1DigitalLinkToolkit.js for the values and for decompression), with each URI's domain replaced by
// this resolver's root. Three groups:
//   reads: valid, and `?explain=1` shows the same GTIN, lot and serial;
//   refused: invalid per GS1's grammar, and we answer 400;
//   elsewhere: a path this resolver does not serve (another primary key, the convenience alphas
//     removed in Digital Link 1.3, a custom path stem): 404, as any unknown path.

let org: TestOrg
const THNG = 'thngId=U5mQKGDpnymBwQwRakyBqeYh'

type Read = { gtin: string; lot?: string; serial?: string; linkTypeRefused?: boolean }

const READS: [string, Read][] = [
  ['/01/09780345418913/10/231/21/345345?15=120820', { gtin: '09780345418913', lot: '231', serial: '345345' }],
  ['/01/9780345418913/21/43786?foo=bar', { gtin: '09780345418913', serial: '43786' }],
  ['/01/01234565/', { gtin: '00000001234565' }],
  ['/01/01234565/10/12345/21/4512', { gtin: '00000001234565', lot: '12345', serial: '4512' }],
  ['/01/012345678905', { gtin: '00012345678905' }],
  ['/01/12345670/10/4512?240=ABCD', { gtin: '00000012345670', lot: '4512' }],
  ['/01/9780345418913', { gtin: '09780345418913' }],
  ['/01/9780345418913/10/38737643', { gtin: '09780345418913', lot: '38737643' }],
  ['/01/9780345418913/10/38737643/21/58943', { gtin: '09780345418913', lot: '38737643', serial: '58943' }],
  [
    `/01/9780345418913/10/38737643/21/58943?15=230911&${THNG}`,
    { gtin: '09780345418913', lot: '38737643', serial: '58943' },
  ],
  ['/01/9780345418913/10/38737643?15=230911', { gtin: '09780345418913', lot: '38737643' }],
  ['/01/9780345418913?4321=1', { gtin: '09780345418913' }],
  // compressed (GS1 Digital Link URI Syntax §7)
  ['/ARHKVAdpQg', { gtin: '09780345418913' }],
  ['/ARHKVAdpQkIKqwo?foo=bar', { gtin: '09780345418913', serial: '43786' }],
  ['/DBHKVAdpQgqrCvBv0UMG21W', { gtin: '09780345418913', serial: '43786' }],
  ['/HxHKVAdpQgZzjr-hCDKigI', { gtin: '09780345418913', lot: '231', serial: '345345' }],
  // valid URIs whose linkType is no GS1 link type: read alike, the link type refused (400)
  ['/01/12345670/10/4512?linkType=ABCD', { gtin: '00000012345670', lot: '4512', linkTypeRefused: true }],
  [
    `/01/09780345418913/10/38737643/21/58943?15=230911&${THNG}&linkType=test`,
    { gtin: '09780345418913', lot: '38737643', serial: '58943', linkTypeRefused: true },
  ],
  [
    `/01/9780345418913/10/38737643/21/58943?15=230911&${THNG}&linkType=product`,
    { gtin: '09780345418913', lot: '38737643', serial: '58943', linkTypeRefused: true },
  ],
  [
    '/01/9780345418913/10/38737643?linkType=barcode',
    { gtin: '09780345418913', lot: '38737643', linkTypeRefused: true },
  ],
  [
    '/HxHKVAdpQhCTxbrOF_yEFcx_4a2GeAh1mFOZkChg6Z8pgcEMEWpMganmIfESxTyJ5UvMJa9Za',
    { gtin: '09780345418913', lot: '38737643', serial: '58943', linkTypeRefused: true },
  ],
]

const REFUSED = [
  '/01/47474747474747d', // not digits
  '/01/01234565/21/12345/10/4512', // key qualifiers out of order
  '/01/01234567/21/12345/10/4512', // check digit
  '/01/012345678906', // check digit
  '/01/12345678/10/4512?4321=2', // check digit
  '/01/123', // too short
  '/01/12345678', // check digit
  '/01/12345678?linkType=test', // check digit
  '/01/9780345418913d', // not digits
  // GS1's grammar checks only that AI 4324 has ten digits; the General Specifications make it a
  // date and time (YYMMDDhhmm), and month 34 does not exist: the one URI we refuse that it accepts
  '/01/9780345418913?4324=1234567891',
]

const ELSEWHERE = [
  '/00/123456789123456789/10/4512',
  '/8003/050606547800230002',
  '/gtin/012345678905',
  '/gtin/09780345418913/lot/231/ser/345345?15=120820',
  '/gln/0123456789128',
  '/sscc/012345678912345675',
  '/custom/path/',
  '/some/other/path/info/01/09780345418913/21/12345',
  '/some/other/path/info/DBHKVAdpQgowOQ',
  '/my/custom/path/01/0123456789d/21/12345/10/4512',
]

/** 01234565 is an RCN-8 (GS1-8 prefix 0): a valid Digital Link, but no product the catalog takes. */
const NOT_A_PRODUCT = '00000001234565'

beforeAll(async () => {
  org = await createOrganization()
  for (const gtin of new Set(READS.map(([, read]) => read.gtin)))
    if (gtin !== NOT_A_PRODUCT) {
      const res = await post(PRODUCTS, { gtin, product_name: `Toolkit example ${gtin}` }, org.key)
      expect(res.status).toBe(201)
    }
})

const withExplain = (path: string) => `${path}${path.includes('?') ? '&' : '?'}explain=1`

describe("GS1 Digital Link toolkit's example URIs", () => {
  test('valid URIs read as GS1 reads them (?explain=1)', async () => {
    const before = await tableCounts()
    for (const [path, read] of READS) {
      const res = await get(withExplain(path))
      if (read.gtin === NOT_A_PRODUCT) {
        // read alike (the GTIN-14 named), then no such product: 404
        expect({ path, status: res.status, detail: res.json.detail }).toEqual({
          path,
          status: 404,
          detail: `no product with GTIN ${NOT_A_PRODUCT}`,
        })
        continue
      }
      const seen = { path, status: res.status, request: res.json?.request, outcome: res.json?.outcome?.status }
      expect(seen).toMatchObject({
        path,
        status: 200,
        request: { gtin: read.gtin, cpv: null, lot: read.lot ?? null, serial: read.serial ?? null },
      })
      if (read.linkTypeRefused) expect({ path, outcome: seen.outcome }).toEqual({ path, outcome: 400 })
      else expect({ path, outcome: seen.outcome }).toEqual({ path, outcome: 404 }) // no rule: nothing to send to
    }
    expect(await tableCounts()).toEqual(before)
  })

  test('a refused linkType is still 400 without explain', async () => {
    for (const [path, read] of READS)
      if (read.linkTypeRefused) expectProblem(await get(path), 400, 'invalid_digital_link')
  })

  test('invalid URIs are 400; paths this resolver does not serve are 404', async () => {
    const before = await tableCounts()
    for (const path of REFUSED) {
      const res = await get(withExplain(path))
      expect({ path, status: res.status, code: res.json?.code }).toEqual({
        path,
        status: 400,
        code: 'invalid_digital_link',
      })
    }
    for (const path of ELSEWHERE) {
      const res = await get(path)
      expect({ path, status: res.status, code: res.json?.code }).toEqual({ path, status: 404, code: 'not_found' })
    }
    expect(await tableCounts()).toEqual(before)
  })
})
