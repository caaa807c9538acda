import { beforeAll, describe, expect, test } from 'bun:test'
import { analyzeIngredients } from '../../../src/catalog/ingredients/analyze'
import { createOrganization, PRODUCTS, sql, type TestOrg, uniqueGtin } from '../../support/fixtures'
import { get, post } from '../../support/server'

// Issue 46: "palm-oil free" on a label was read as palm oil (confidence 1), so
// exclude_substances=palm-oil dropped the one product that says it has none.
const NEGATED = [
  'palm oil free',
  'palm-oil-free',
  'free from palm oil',
  'sans huile de palme',
  'ohne Palmöl',
  'without palm oil',
  'no palm oil',
  'senza olio di palma',
  'sin aceite de palma',
  'zonder palmolie',
]
const STATED = ['contains palm oil', 'palm oil', 'palmolie', 'huile de palme']
// a made-up word, so this file's products are the only ones its searches find
const WORD = `Vexlorin${Date.now().toString(36)}`

let org: TestOrg
const created: { gtin: string; name: string; text: string; negated: boolean }[] = []

beforeAll(async () => {
  org = await createOrganization()
  const texts = [...NEGATED, ...STATED].map((phrase) => `Sugar, cocoa butter, rice flour, ${phrase}`)
  for (const [i, text] of texts.entries()) {
    const product = { gtin: uniqueGtin(), name: `${WORD} Bar ${i}`, text, negated: i < NEGATED.length }
    const res = await post(
      PRODUCTS,
      { gtin: product.gtin, product_name: product.name, ingredients_text: text },
      org.key,
    )
    expect(res.status).toBe(201)
    created.push(product)
  }
})

const storedSubstances = async (gtin: string) => {
  const [row] = await sql<{ substances: { slug: string; confidence: number }[] }>(
    `select substances from products where gtin = $1`,
    [gtin.padStart(14, '0')],
  )
  return row!.substances.map((s) => s.slug)
}

describe('negated substances', () => {
  test.each(NEGATED)('"%s" is not palm oil', (phrase) => {
    const analysis = analyzeIngredients(`Sugar, cocoa butter, ${phrase}`)
    expect(analysis.substances.map((s) => s.slug)).not.toContain('palm-oil')
  })

  test.each(STATED)('"%s" is palm oil, at full or name confidence', (phrase) => {
    const palm = analyzeIngredients(`Sugar, ${phrase}`).substances.find((s) => s.slug === 'palm-oil')
    expect(palm?.confidence).toBeGreaterThanOrEqual(0.9)
  })

  test('a negated allergen is not contained; one named beside a negation still is', () => {
    expect(analyzeIngredients('rice, milk-free').contains).toEqual([])
    expect(analyzeIngredients('sans lait, oeufs').contains).toEqual(['eggs'])
    // "free" before a name needs its "from": the milk of a sugar-free milk chocolate is there
    expect(analyzeIngredients('sugar free milk chocolate').contains).toEqual(['milk'])
    expect(analyzeIngredients('free from milk').contains).toEqual([])
  })

  test('products that say they have no palm oil are stored without it and kept by exclude_substances', async () => {
    for (const p of created)
      expect({ text: p.text, palm: (await storedSubstances(p.gtin)).includes('palm-oil') }).toEqual({
        text: p.text,
        palm: !p.negated,
      })
    const res = await get(
      `/catalog/api/v1/search?q=${WORD}&type=product&exclude_substances=palm-oil&limit=100`,
      org.key,
    )
    expect(res.status).toBe(200)
    const found = (res.json.results as { name: string }[]).map((r) => r.name).sort()
    expect(found).toEqual(
      created
        .filter((p) => p.negated)
        .map((p) => p.name)
        .sort(),
    )
  })
})
