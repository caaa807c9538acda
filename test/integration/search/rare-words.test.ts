import { describe, expect, test } from 'bun:test'
import { parseQuery } from '../../../src/search/query'
import { commonLexemes, rareInProducts, refreshCommonLexemes } from '../../../src/search/rare'
import { createOrganization, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { get, post } from '../../support/server'

// A query the statistics tell is rare in product documents is found straight from their GIN index,
// without the walk in title order (src/search/rare.ts): the same rows in the same order.
const SEARCH = '/catalog/api/v1/search'
const names = async (query: string) => {
  const res = await get(`${SEARCH}?q=${encodeURIComponent(query)}&type=product`)
  expect(res.status).toBe(200)
  return (res.json.results as { name: string; match: string }[]).map((r) => `${r.name} (${r.match})`)
}
const letters = () => Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')

describe('rare words in product documents', () => {
  test('a word only in ingredients, rare by the statistics, is found from the GIN index as the walk finds it', async () => {
    const org = await createOrganization()
    const word = `zorblat${letters()}`
    for (const name of ['Quartle Jam Jar Large', 'Quartle', 'Quartle Jam'])
      expect(
        (
          await post(
            PRODUCTS,
            { gtin: uniqueGtin(), product_name: name, ingredients_text: `sugar, ${word} extract` },
            org.key,
          )
        ).status,
      ).toBe(201)
    // titles hold neither the word nor its prefix; the documents' bodies do: shortest title first
    const expected = ['Quartle (fulltext)', 'Quartle Jam (fulltext)', 'Quartle Jam Jar Large (fulltext)']
    const queries = [`${word} `, word.slice(0, 9), `${word} quartle`, `${word} -jam`]
    const found = async () => Promise.all(queries.map(names))
    try {
      // no statistics: walked in title order
      await refreshCommonLexemes(null)
      const walked = await found()
      expect(walked).toEqual([expected, expected, expected, ['Quartle (fulltext)']])
      // statistics in which the word is rare (a test's small catalog makes every word common)
      await refreshCommonLexemes(['sugar', 'quartle', 'jam', 'extract'])
      expect(rareInProducts(parseQuery(queries[0]!), commonLexemes())).toBe(true)
      expect(rareInProducts(parseQuery(queries[1]!), commonLexemes())).toBe(true)
      expect(await found()).toEqual(walked)
    } finally {
      await refreshCommonLexemes()
    }
  })

  test('the most common lexeme of the catalog is not rare: its documents are walked in title order', async () => {
    await sql('analyze search_products')
    await refreshCommonLexemes()
    const common = commonLexemes()
    expect(common).not.toBeNull()
    const [top] = await sql<{ lexeme: string }>(
      `select e as lexeme from pg_stats, unnest(most_common_elems::text::text[]) e
       where schemaname = current_schema() and tablename = 'search_products' and attname = 'search_vector' limit 1`,
    )
    expect(common!.has(top!.lexeme)).toBe(true)
    expect(rareInProducts(parseQuery(`${top!.lexeme} `), common)).toBe(false)
  })
})
