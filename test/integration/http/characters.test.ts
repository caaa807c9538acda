import { describe, expect, test } from 'bun:test'
import { createOrganization, expectProblem, PRODUCTS, RETAILERS, uniqueGtin } from '../../support/fixtures'
import { post } from '../../support/server'

// Lengths count characters (code points), as PostgreSQL's varchar does: an emoji is one.
describe('lengths in characters', () => {
  const emoji = (n: number) => '🥫'.repeat(n)

  test('255 emoji are a 255-character name; 256 are one too many', async () => {
    const org = await createOrganization()
    const ok = await post(RETAILERS, { name: emoji(255), metadata: { [emoji(40)]: emoji(500) } }, org.key)
    expect(ok.status).toBe(201)
    expect(ok.json.name).toBe(emoji(255))
    expect(ok.json.metadata).toEqual({ [emoji(40)]: emoji(500) })
    const long = await post(RETAILERS, { name: emoji(256) }, org.key)
    expectProblem(long, 422, 'validation_error')
    expect(long.json.errors).toEqual([{ field: 'name', message: 'must be between 1 and 255 characters' }])
    expectProblem(
      await post(RETAILERS, { name: 'x', metadata: { [emoji(41)]: 'v' } }, org.key),
      422,
      'validation_error',
    )
  })

  test('product names too, and a wrong type is named as such', async () => {
    const org = await createOrganization()
    const ok = await post(PRODUCTS, { gtin: uniqueGtin(), product_name: emoji(255) }, org.key)
    expect(ok.status).toBe(201)
    expect(ok.json.product_name).toBe(emoji(255))
    const wrong = await post(PRODUCTS, { gtin: uniqueGtin(), product_name: null }, org.key)
    expectProblem(wrong, 422, 'validation_error')
    expect(wrong.json.errors).toEqual([
      { field: 'product_name', message: 'must be a string of at most 255 characters; got null' },
    ])
  })
})
