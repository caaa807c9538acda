import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { analyzeIngredients, substanceCount, substanceSlug } from '../../../src/catalog/ingredients/analyze'
import data from '../../../src/catalog/ingredients/substances.json'

type Case = { id: string; text: string; contains: string[]; may_contain: string[] }
// the repository's copy of the sample ingredient cases (test/fixtures), so a bare clone runs it
const CASES = join(import.meta.dir, '../../fixtures/ingredients/cases.json')
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
    expect(bySlug.sugar).toEqual({ slug: 'sugar', span: 'Sugar', confidence: 1 })
    expect(bySlug['palm-oil']).toEqual({ slug: 'palm-oil', span: 'Palm Oil', confidence: 1 })
    expect(bySlug.e250).toEqual({ slug: 'e250', span: 'E250', confidence: 0.95 })
    expect(bySlug.sulphite!.confidence).toBe(0.6)
    expect(bySlug.hazelnut).toMatchObject({ span: 'hazelnuts', confidence: 0.9 })
    expect(r.contains).toEqual(['nuts', 'sulphur-dioxide-and-sulphites'])
  })

  test("what is remembered of a word (analyze.ts's wordFacts) carries nothing of the label it was first read in", () => {
    // each word first met where it names nothing (negated, or inside a longer name), then alone
    expect(analyzeIngredients('sans metebisulfite, ohne Weizenkleie, cocoa butter, milk free').contains).toEqual([])
    const r = analyzeIngredients('metebisulfite, Weizenkleie, butter, milk')
    expect(r.substances.map((s) => [s.span, s.confidence])).toEqual([
      ['metebisulfite', 0.6],
      ['Weizenkleie', 0.75],
      ['butter', 1],
      ['milk', 1],
    ])
    expect(r.contains).toEqual(['gluten', 'milk', 'sulphur-dioxide-and-sulphites'])
    // and read again, the same
    expect(analyzeIngredients('metebisulfite, Weizenkleie, butter, milk')).toEqual(r)
  })

  test('spans are quoted as written around characters that fold to two, or none, and joined E-numbers', () => {
    // fold.ts keeps each folded character's origin only once one is not its own place (Œ → oe, a
    // character outside the BMP, an E-number joined): the quotes after it stay where they were
    const spans = (text: string) => analyzeIngredients(text).substances.map((s) => s.span)
    expect(spans('Œufs frais, lait 🥛 entier, E 250, crème (lait)')).toEqual([
      'Œufs frais',
      'lait 🥛 entier',
      'E 250',
      'crème',
    ])
    expect(spans('sucre, ﬁbre de blé, E-330, ŒUFS, noisettes 🌰')).toEqual([
      'sucre',
      'ﬁbre de blé',
      'E-330',
      'ŒUFS',
      'noisettes 🌰',
    ])
    expect(spans('Sel, e 471, lait')).toEqual(['Sel', 'e 471', 'lait'])
    // a character outside the BMP that folds to one (𝟏 → 1): two code units, one folded character
    expect(spans('sel 𝟏𝟐, lait')).toEqual(['sel 𝟏𝟐', 'lait'])
    // compatibility capitals (mathematical letters) are read in lower case like any other
    expect(analyzeIngredients('sucre, 𝐋𝐀𝐈𝐓 entier').contains).toEqual(['milk'])
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

  test('spans are quoted as written on the label, mark-up and percentages aside', () => {
    const r = analyzeIngredients('Sugar, whole MILK powder 12 %, _Noisettes_ (5,5%), Œufs frais. Peut contenir : SOJA.')
    expect(r.substances.map((s) => s.span)).toEqual(['Sugar', 'whole MILK powder', 'Noisettes', 'Œufs frais'])
    expect(r.mayContain).toEqual(['soybeans'])
  })

  test('additives are Open Food Facts ingredient ids: the E-number, by number or by name', () => {
    const slugs = (text: string) => analyzeIngredients(text).substances.map((s) => s.slug)
    expect(slugs('E 250')).toEqual(['e250'])
    expect(slugs('sodium nitrite')).toEqual(['e250'])
    expect(slugs('aspartame, E-330')).toEqual(['e951', 'e330'])
    // An E-number of a group is its own id; the group's name keeps the group's id.
    expect(slugs('E221')).toEqual(['e221'])
    expect(slugs('sulphites')).toEqual(['sulphite'])
    expect(substanceSlug('sodium-nitrite')).toBe('e250')
    expect(substanceSlug('E250')).toBe('e250')
    expect(substanceSlug('palm-oil')).toBe('palm-oil')
    expect(substanceSlug('no-such-thing')).toBeNull()
  })

  test('certifications from label claims', () => {
    expect(analyzeIngredients('Oats. USDA Organic.').certifications).toEqual(['organic', 'usda-organic'])
    expect(analyzeIngredients('Avoine. FR-BIO-01').certifications).toEqual(['organic', 'eu-organic'])
    expect(analyzeIngredients('Organic oats (Fairtrade).').certifications).toEqual(['organic', 'fair-trade'])
    expect(analyzeIngredients('Flocons d avoine*. *Issu de l agriculture biologique').certifications).toEqual([
      'organic',
    ])
  })
})
