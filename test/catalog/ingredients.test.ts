import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { analyzeIngredients, substanceCount } from '../../src/catalog/ingredients/analyze'
import data from '../../src/catalog/ingredients/substances.json'

type Case = { id: string; text: string; contains: string[]; may_contain: string[] }
// the repository's copy of the sample ingredient cases (test/fixtures), so a bare clone runs it
const CASES = join(import.meta.dir, '..', 'fixtures', 'ingredients', 'cases.json')
const cases = JSON.parse(readFileSync(CASES, 'utf8')) as Case[]

describe('ingredient parsing on real labels (test/fixtures/ingredients/cases.json)', () => {
  test('all 40 cases are present', () => {
    expect(cases).toHaveLength(40)
  })

  test.each(cases.map((c) => [c.id, c] as const))('%s', (_, c) => {
    const result = analyzeIngredients(c.text)
    expect({ contains: result.contains, may_contain: result.mayContain }).toEqual({
      contains: [...c.contains].sort(),
      may_contain: [...c.may_contain].sort(),
    })
  })
})

describe('substance matching', () => {
  test('the substance file has at least 150 substances, each allergen class among the EU 14', () => {
    expect(substanceCount).toBeGreaterThanOrEqual(150)
    const eu14 = [
      'gluten',
      'crustaceans',
      'eggs',
      'fish',
      'peanuts',
      'soybeans',
      'milk',
      'nuts',
      'celery',
      'mustard',
      'sesame-seeds',
      'sulphur-dioxide-and-sulphites',
      'lupin',
      'molluscs',
    ]
    const classes = new Set(data.substances.map((s) => s.allergen).filter(Boolean))
    expect([...classes].sort()).toEqual([...eu14].sort())
  })

  test('spans, confidences: exact and synonym high, E-number, fuzzy lower', () => {
    const r = analyzeIngredients('Sugar, Palm Oil, E250, sodium metebisulfite, hazelnuts (12%)')
    const bySlug = Object.fromEntries(r.substances.map((s) => [s.slug, s]))
    expect(bySlug.sugar).toEqual({ slug: 'sugar', span: 'sugar', confidence: 1 })
    expect(bySlug['palm-oil']).toEqual({ slug: 'palm-oil', span: 'palm oil', confidence: 1 })
    expect(bySlug['sodium-nitrite']!.confidence).toBe(0.95)
    expect(bySlug.sulphite!.confidence).toBe(0.6)
    expect(bySlug.hazelnut).toMatchObject({ span: 'hazelnuts', confidence: 0.9 })
    expect(r.contains).toEqual(['nuts', 'sulphur-dioxide-and-sulphites'])
  })

  test('longest name wins: cocoa butter and peanut butter are not milk; coconut is not a nut', () => {
    expect(analyzeIngredients('cocoa butter, shea butter, coconut, nutmeg').contains).toEqual([])
    expect(analyzeIngredients('peanut butter').contains).toEqual(['peanuts'])
    expect(analyzeIngredients('butter').contains).toEqual(['milk'])
  })

  test('"may contain" goes to may_contain, recorded apart from the ingredients', () => {
    const r = analyzeIngredients('Oats, sugar. May contain milk and tree nuts. Packed in Ohio.')
    expect(r.contains).toEqual(['gluten'])
    expect(r.mayContain).toEqual(['milk', 'nuts'])
  })

  test('certifications from label claims', () => {
    expect(analyzeIngredients('Organic oats (Fairtrade).').certifications).toEqual(['organic', 'fair-trade'])
    expect(analyzeIngredients('Flocons d avoine*. *Issu de l agriculture biologique').certifications).toEqual([
      'organic',
    ])
  })
})
