import { describe, expect, test } from 'bun:test'
import { parseQuery } from '../../../src/search/query'
import { lexemesOf, rareInProducts } from '../../../src/search/rare'

// Whether a query skips the walk of product documents in title order (src/search/rare.ts): rare
// when some clause has every term missing from the statistics' most common lexemes.
const COMMON = new Set(['chocolate', 'milk', 'traditional', 'made', 'way', 'e250', 'creme'])
const rare = (q: string) => rareInProducts(parseQuery(q), COMMON)

describe('rare queries', () => {
  test('a word or prefix no common lexeme is or begins is rare: substrings and typos', () => {
    expect(rare('ocolat')).toBe(true) // typed: a prefix
    expect(rare('choclate')).toBe(true)
    expect(rare('choclate ')).toBe(true) // a word
  })

  test('a common word, or a prefix of one, is not', () => {
    expect(rare('chocolate ')).toBe(false)
    expect(rare('choc')).toBe(false)
    expect(rare('tradi')).toBe(false)
    expect(rare('E250 ')).toBe(false)
  })

  test('words fold as the catalog configuration folds them: case and accents', () => {
    expect(lexemesOf("Crème brûlée, l'huile")).toEqual(['creme', 'brulee', 'l', 'huile'])
    expect(rare('CRÈME ')).toBe(false)
  })

  test('all clauses must match: one rare clause makes the query rare', () => {
    expect(rare('milk zorblat')).toBe(true)
    expect(rare('zorblat milk')).toBe(true)
    expect(rare('milk chocolate')).toBe(false)
  })

  test('a clause of alternatives is rare only when every alternative is', () => {
    expect(rare('milk OR zorblat')).toBe(false)
    expect(rare('zorblat OR quenty')).toBe(true)
  })

  test('a phrase is rare when one of its words is', () => {
    expect(rare('"traditional way"')).toBe(false)
    expect(rare('"traditional zorblat"')).toBe(true)
  })

  test('exclusions do not make a query rare; nothing is rare without statistics or for a code', () => {
    expect(rare('milk -zorblat')).toBe(false)
    expect(rareInProducts(parseQuery('zorblat'), null)).toBe(false)
    expect(rare('4006381333931')).toBe(false)
  })
})
