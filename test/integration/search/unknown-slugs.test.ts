import { describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { get, post } from '../../support/server'

// Issue 46: an unknown allergen was 422, while an unknown certification or substance was taken as
// a filter that matched nothing (required) or dropped nothing (excluded). One rule for all three:
// 422 naming the parameter and the unknown slug.
const SEARCH = '/catalog/api/v1/search'
const WORD = `Quillemot${Date.now().toString(36)}`

const search = (params: [string, string][]) => get(`${SEARCH}?${new URLSearchParams([['q', WORD], ...params])}`)

describe('unknown filter slugs', () => {
  test.each([
    ['exclude_allergens', 'peanut', 'allergen'],
    ['certifications', 'unicorn-approved', 'certification'],
    ['exclude_substances', 'kryptonite', 'substance'],
    ['exclude_substances', 'palm-oill', 'substance'],
  ])('%s=%s is 422 naming the parameter and the slug', async (param, slug, what) => {
    const res = await search([[param, slug]])
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors).toHaveLength(1)
    expect(res.json.errors[0].field).toStartWith(param)
    expect(res.json.errors[0].message).toStartWith(`unknown ${what} "${slug}"`)
    expect(res.json.detail).toContain(slug)
  })

  test('an unknown slug beside known ones is 422 too; known slugs, aliases and E-numbers pass', async () => {
    const mixed = await search([
      ['certifications', 'organic'],
      ['certifications', 'fairtrade-ish'],
    ])
    expectProblem(mixed, 422, 'validation_error')
    expect(mixed.json.errors[0].field).toStartWith('certifications')
    expect(mixed.json.errors[0].message).toContain('"fairtrade-ish"')
    // a short list is given in full, the substances' is in the OpenAPI document
    expect(mixed.json.errors[0].message).toContain('known: ')
    expect(mixed.json.errors[0].message).toContain('fair-trade')
    const ok = await search([
      ['exclude_allergens', 'peanuts'],
      ['certifications', 'usda-organic'],
      ['exclude_substances', 'palm-oil'],
      ['exclude_substances', 'e250'],
      ['exclude_substances', 'sodium-nitrite'],
    ])
    expect(ok.status).toBe(200)
  })

  test('filters act on the catalog only with known slugs; nothing is stored by a refused search', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const made = await post(
      PRODUCTS,
      { gtin, product_name: `${WORD} Biscuit`, ingredients_text: 'wheat flour, sugar, palm oil' },
      org.key,
    )
    expect(made.status).toBe(201)
    const before = await sql('select substances, certifications from products where gtin = $1', [
      gtin.padStart(14, '0'),
    ])
    // before the fix the misspelt substance dropped nothing and answered 200 with the biscuit
    expectProblem(await search([['exclude_substances', 'palmoil']]), 422, 'validation_error')
    expect((await search([['exclude_substances', 'palm-oil']])).json.results).toEqual([])
    expect(
      await sql('select substances, certifications from products where gtin = $1', [gtin.padStart(14, '0')]),
    ).toEqual(before)
  })
})
