import { describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, PRODUCTS, tableCounts, uniqueGtin } from '../../support/fixtures'
import { patch, post } from '../../support/server'

// Spec details (issue 11): country codes are assigned ISO 3166-1 alpha-2 codes.
describe('country_of_origin', () => {
  test('assigned codes pass in any case; unassigned ones (XX, XK, EU, ZZ) are 422 and change nothing', async () => {
    const org = await createOrganization()
    for (const [given, stored] of [
      ['de', 'DE'],
      ['US', 'US'],
      ['', ''],
    ]) {
      const res = await post(PRODUCTS, { gtin: uniqueGtin(), country_of_origin: given }, org.key)
      expect(res.status).toBe(201)
      expect(res.json.country_of_origin).toBe(stored)
    }
    const gtin = uniqueGtin()
    expect((await post(PRODUCTS, { gtin }, org.key)).status).toBe(201)
    const before = await tableCounts()
    for (const code of ['XX', 'xk', 'EU', 'ZZ', 'AA']) {
      const created = await post(PRODUCTS, { gtin: uniqueGtin(), country_of_origin: code }, org.key)
      expectProblem(created, 422, 'validation_error')
      expect(created.json.errors).toEqual([
        {
          field: 'country_of_origin',
          message: 'must be an assigned ISO 3166-1 alpha-2 code (such as DE or US) or empty',
        },
      ])
      expectProblem(await patch(`${PRODUCTS}/${gtin}`, { country_of_origin: code }, org.key), 422, 'validation_error')
      expectProblem(
        await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { country_of_origin: code } }, org.key),
        422,
        'validation_error',
      )
    }
    expect(await tableCounts()).toEqual(before)
  })
})
