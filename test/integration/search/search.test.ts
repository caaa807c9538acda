import { beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { db } from '../../../src/db/client'
import { transaction } from '../../../src/db/tx'
import { refreshSearchDocuments } from '../../../src/search'
import { search as searchCatalog } from '../../../src/search/search'
import type { SearchInput, SearchRow } from '../../../src/search/types'
import {
  ADMIN,
  createKey,
  createOrganization,
  expectProblem,
  PRODUCT_ROW_KEYS,
  PRODUCTS,
  RETAILERS,
  type TestOrg,
  uniqueGtin,
} from '../../support/fixtures'
import { get, patch, post } from '../../support/server'

// A seeded catalog in made-up words (nothing else in the test database uses them), searched
// anonymously on the main test server (its anonymous limit is raised; see rate-limit.test.ts).
const SEARCH = '/catalog/api/v1/search'
type Row = { type: string; id: string; name: string; rank: number; match: string; [k: string]: unknown }
const search = async (params: Record<string, string | string[]>, key?: string) => {
  const qs = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) qs.append(k, one)
  const res = await get(`${SEARCH}?${qs}`, key)
  const json: { query: string; total_count: number; results: Row[]; errors?: unknown } = res.json
  return { ...res, json }
}
const names = (rows: Row[]) => rows.map((r) => r.name)

let org: TestOrg
const gtins: Record<string, string> = {}
const SEED = [
  { key: 'dark', gtin: '4006381333931', product_name: 'Quorvane Dark Zimbelade', brand: 'Quorvane' },
  {
    key: 'milk',
    gtin: '5449000000996',
    product_name: 'Quorvane Milk Zimbelade',
    brand: 'Quorvane',
    ingredients_text: 'sugar, whole milk powder, hazelnuts. USDA Organic',
  },
  {
    key: 'nitrite',
    gtin: '3017620422003',
    product_name: 'Pellomar Smoked Tressel',
    brand: 'Pellomar',
    ingredients_text: 'pork, salt, E250',
  },
  {
    key: 'weak',
    gtin: '0012000161155',
    product_name: 'Pellomar Tressel Spread',
    brand: 'Pellomar',
    ingredients_text: 'pork, sodium metebisulfite',
  },
  { key: 'spread', gtin: '7622210449283', product_name: 'Zimbelade Hazel Spread', description: 'a Quorvane recipe' },
]

beforeAll(async () => {
  org = await createOrganization()
  for (const { key, ...body } of SEED) {
    const res = await post(PRODUCTS, body, org.key)
    expect(res.status).toBe(201)
    gtins[key] = res.json.gtin
  }
  // a canonical retailer (the shared directory: any caller finds it) and one of the organization's own
  const market = { name: 'Quorvane Market', website: 'https://quorvane.example', is_canonical: true }
  expect((await post(RETAILERS, market, org.key, ADMIN)).status).toBe(201)
  expect((await post(RETAILERS, { name: 'Quorvane Corner Shop', is_physical: true }, org.key)).status).toBe(201)
})

describe('catalog search (spec #10): syntax', () => {
  test('words must all match; the envelope; every row shape of the contract', async () => {
    const res = await search({ q: 'zimbelade milk' })
    expect(res.status).toBe(200)
    expect(res.json.query).toBe('zimbelade milk')
    expect(names(res.json.results)).toEqual(['Quorvane Milk Zimbelade'])
    expect(res.json.total_count).toBe(1)
    const [row] = res.json.results
    expect(Object.keys(row!).sort()).toEqual(PRODUCT_ROW_KEYS)
    expect(row).toMatchObject({
      type: 'product',
      match: 'fulltext',
      gtin: gtins.milk,
      brand: 'Quorvane',
      contains_allergens: ['milk', 'nuts'],
      certifications: ['organic', 'usda-organic'],
      substance_flags: [],
    })
    expect(row!.rank).toBeGreaterThan(0)
    expect(row!.rank).toBeLessThan(1)
  })

  test('"quoted phrases" keep their order; -exclusions; OR; accents and case do not matter', async () => {
    expect(names((await search({ q: '"dark zimbelade"', type: 'product' })).json.results)).toEqual([
      'Quorvane Dark Zimbelade',
    ])
    expect((await search({ q: '"zimbelade dark"', type: 'product' })).json.results).toEqual([])
    expect(names((await search({ q: 'zimbelade -milk -hazel', type: 'product' })).json.results)).toEqual([
      'Quorvane Dark Zimbelade',
    ])
    expect(names((await search({ q: 'zimbelade -"milk zimbelade"', type: 'product' })).json.results).sort()).toEqual([
      'Quorvane Dark Zimbelade',
      'Zimbelade Hazel Spread',
    ])
    expect(names((await search({ q: 'tressel OR dark', type: 'product' })).json.results).sort()).toEqual([
      'Pellomar Smoked Tressel',
      'Pellomar Tressel Spread',
      'Quorvane Dark Zimbelade',
    ])
    expect(names((await search({ q: 'ZÎMBELÄDE DÀRK', type: 'product' })).json.results)).toEqual([
      'Quorvane Dark Zimbelade',
    ])
  })

  test('the word being typed matches as a prefix; after a space it is a whole word', async () => {
    const typing = await search({ q: 'zimbel', type: 'product' })
    expect(typing.json.results.map((r) => r.match)).toEqual(['fulltext', 'fulltext', 'fulltext'])
    expect(names((await search({ q: 'pellomar tres', type: 'product' })).json.results).sort()).toEqual([
      'Pellomar Smoked Tressel',
      'Pellomar Tressel Spread',
    ])
    // "zimbel " is a finished word: no product has it, so the substring tier answers
    const finished = await search({ q: 'zimbel ', type: 'product' })
    expect(finished.json.results.map((r) => r.match)).toEqual(['substring', 'substring', 'substring'])
  })

  test('only punctuation, or only exclusions: 200 with no rows', async () => {
    for (const q of ['---', '"" ,;', '-zimbelade', '-"dark zimbelade" -milk', 'OR']) {
      const res = await search({ q })
      expect({ q, status: res.status, rows: res.json.results }).toEqual({ q, status: 200, rows: [] })
      expect(res.json.total_count).toBe(0)
    }
  })
})

describe('catalog search: ranking, tiers, GTINs', () => {
  test('brands, retailers and products ranked together, by rank descending, cut to limit', async () => {
    const res = await search({ q: 'quorvane' })
    const rows = res.json.results
    expect(new Set(rows.map((r) => r.type))).toEqual(new Set(['product', 'brand', 'retailer']))
    expect(rows.map((r) => r.rank)).toEqual([...rows.map((r) => r.rank)].sort((a, b) => b - a))
    // the brand's whole name is the query: it ranks first
    expect(rows[0]).toMatchObject({ type: 'brand', name: 'Quorvane', product_count: 2, match: 'fulltext' })
    const retailer = rows.find((r) => r.type === 'retailer')!
    expect(retailer).toMatchObject({
      name: 'Quorvane Market',
      website: 'https://quorvane.example',
      is_online: false,
      is_physical: false,
    })
    const two = await search({ q: 'quorvane', limit: '2' })
    expect(two.json.results).toEqual(rows.slice(0, 2))
    expect(two.json.total_count).toBe(2)
    expect(
      (await search({ q: 'quorvane', type: ['brand', 'retailer'] })).json.results.map((r) => r.type).sort(),
    ).toEqual(['brand', 'retailer'])
  })

  test('titles rank by their length, 16 words and more included; a phrase skips shorter titles without it', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}x`).join(' ')
    const [one, three, seven, twenty, seventeen] = [
      'Brimbellor',
      'Brimbellor Oat Bar',
      `Oat Brimbellor Crunch Bar ${words(3)}`,
      `Brimbellor Oat Bar ${words(17)}`,
      `Brimbellor ${words(16)}`,
    ]
    for (const product_name of [one, three, seven, twenty, seventeen])
      expect((await post(PRODUCTS, { gtin: uniqueGtin(), product_name }, org.key)).status).toBe(201)
    const all = (await search({ q: 'brimbellor', type: 'product' })).json.results
    // 1, 3, 7, 17 and 20 words: the two longest share the last tag of title_keys (16 and more), sorted by length
    expect(names(all)).toEqual([one, three, seven, seventeen, twenty])
    const ranks = all.map((r) => r.rank)
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a))
    expect(new Set(ranks).size).toBe(5)
    expect(names((await search({ q: 'brimbellor', type: 'product', limit: '2' })).json.results)).toEqual([one, three])
    // "oat bar" as a phrase: the 3- and 20-word titles have it; the 7-word one has both words apart
    expect(names((await search({ q: '"oat bar" brimbellor', type: 'product' })).json.results)).toEqual([three, twenty])
  })

  test('no full-text match: a substring of a name; no substring either: a typo', async () => {
    const inner = await search({ q: 'belad', type: 'product' })
    expect(inner.json.results.map((r) => r.match)).toEqual(['substring', 'substring', 'substring'])
    expect(names(inner.json.results)).toContain('Zimbelade Hazel Spread')
    const typo = await search({ q: 'zimbelaed', type: 'product' })
    expect(typo.json.results.length).toBeGreaterThan(0)
    expect(new Set(typo.json.results.map((r) => r.match))).toEqual(new Set(['fuzzy']))
    expect(names(typo.json.results)).toContain('Quorvane Dark Zimbelade')
    const brandTypo = await search({ q: 'quorvnae', type: 'brand' })
    expect(brandTypo.json.results).toMatchObject([{ name: 'Quorvane', match: 'fuzzy' }])
  })

  test('a typo: every clause corrected, exclusions kept, ranked below the same title found exactly', async () => {
    const exact = (await search({ q: 'dark zimbelade', type: 'product' })).json.results
    const typo = (await search({ q: 'dark zimbelaed', type: 'product' })).json.results
    expect(names(typo)).toEqual(['Quorvane Dark Zimbelade'])
    expect(typo[0]).toMatchObject({ match: 'fuzzy' })
    // the same title, scaled by how alike "zimbelaed" and "zimbelade" are
    expect(typo[0]!.rank).toBeGreaterThan(0.2)
    expect(typo[0]!.rank).toBeLessThan(exact.find((r) => r.name === 'Quorvane Dark Zimbelade')!.rank)
    const excluding = names((await search({ q: 'zimbelaed -noir', type: 'product' })).json.results)
    expect(excluding).toContain('Quorvane Milk Zimbelade')
    expect(excluding).not.toContain('Quorvane Noir Zimbelade')
    // a clause with no alike word in the catalog: no typo match at all, not a match of the rest
    expect((await search({ q: 'zimbelaed xqvwzkjh', type: 'product' })).json.results).toEqual([])
  })

  test('a typo skips the substring statement: full text tells that no name holds the word', async () => {
    // the statements the search pool is sent (named search_*), counted by wrapping pg's client
    const sent: string[] = []
    const query = pg.Client.prototype.query
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      const name = (config as { name?: string } | null)?.name
      if (name?.startsWith('search_')) sent.push(name)
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest)
    } as typeof query
    const input = (q: string): SearchInput => ({
      q,
      types: ['product', 'brand', 'retailer'],
      limit: 20,
      excludeAllergens: [],
      certifications: [],
      excludeSubstances: [],
      organizationId: null,
    })
    const statements = async (q: string) => {
      sent.length = 0
      const rows = await searchCatalog(db, input(q))
      return { matches: [...new Set(rows.map((r) => r.match))], statements: sent.length }
    }
    try {
      // full text (which finds nothing, and no catalog word holding "zimbelaed"), then typos
      expect(await statements('zimbelaed')).toEqual({ matches: ['fuzzy'], statements: 2 })
      expect(await statements('dark zimbelaed')).toEqual({ matches: ['fuzzy'], statements: 2 })
      // a word inside catalog words: full text, then substrings
      expect(await statements('imbelad')).toEqual({ matches: ['substring'], statements: 2 })
      // not letters only: only the substring statement can tell, then typos
      expect(await statements('zimbelaed2')).toEqual({ matches: ['fuzzy'], statements: 3 })
      expect(await statements('zimbelade')).toEqual({ matches: ['fulltext'], statements: 1 })
    } finally {
      pg.Client.prototype.query = query
    }
  })

  test('a GTIN in any form is found exactly and ranked first; digits are never fuzzed', async () => {
    for (const q of ['4006381333931', '04006381333931', '400 6381 33393 1', '4006381-333931']) {
      const res = await search({ q })
      expect(res.json.results[0]).toMatchObject({
        type: 'product',
        name: 'Quorvane Dark Zimbelade',
        rank: 1,
        match: 'gtin',
      })
      expect(res.json.results.filter((r) => r.name === 'Quorvane Dark Zimbelade')).toHaveLength(1)
    }
    // UPC-A as 12 digits (stored as GTIN-14)
    expect((await search({ q: '012000161155' })).json.results[0]).toMatchObject({ name: 'Pellomar Tressel Spread' })
    // one digit off: no exact hit, and no similar codes offered
    const near = await search({ q: '4006381333932' })
    expect(near.json.results.filter((r) => r.match === 'fuzzy' || r.match === 'gtin')).toEqual([])
  })

  test('fresh: a created or renamed product is found as soon as the request returns', async () => {
    const gtin = uniqueGtin()
    expect((await post(PRODUCTS, { gtin, product_name: 'Vexilloran Crisps' }, org.key)).status).toBe(201)
    expect(names((await search({ q: 'vexilloran' })).json.results)).toEqual(['Vexilloran Crisps'])
    expect((await patch(`${PRODUCTS}/${gtin}`, { product_name: 'Vexilloran Waffles' }, org.key)).status).toBe(200)
    expect(names((await search({ q: 'vexilloran waffles' })).json.results)).toEqual(['Vexilloran Waffles'])
    expect((await search({ q: 'vexilloran crisps' })).json.results).toEqual([])
  })

  test('a service call in a transaction searches there: its uncommitted rename is found, in every tier', async () => {
    const input = (q: string): SearchInput => ({
      q,
      types: ['product'],
      limit: 20,
      excludeAllergens: [],
      certifications: [],
      excludeSubstances: [],
      organizationId: null,
    })
    const rolledBack = new Error('roll back')
    const inside = await transaction(async (tx) => {
      const renamed = await tx.execute<{ id: string }>(
        sql`update products set product_name = 'Glimmerfrost Zimbelade' where gtin = ${gtins.spread!.padStart(14, '0')} returning id`,
      )
      // as every writer does: the search documents follow the row in the same transaction
      await refreshSearchDocuments(tx, 'product', [renamed.rows[0]!.id])
      const found = {
        fulltext: await searchCatalog(tx, input('glimmerfrost')),
        substring: await searchCatalog(tx, input('immerfro')),
        fuzzy: await searchCatalog(tx, input('glimerfrost')),
      }
      throw Object.assign(rolledBack, { found })
    }).catch((err) => (err === rolledBack ? (err as Error & { found: Record<string, SearchRow[]> }).found : null))
    expect(inside).not.toBeNull()
    for (const [match, rows] of Object.entries(inside!))
      expect(rows.map((r) => [r.name, r.match])).toEqual([['Glimmerfrost Zimbelade', match]])
    // rolled back: nobody else ever saw it
    expect((await search({ q: 'glimmerfrost' })).json.results).toEqual([])
    expect(names((await search({ q: '"zimbelade hazel"', type: 'product' })).json.results)).toEqual([
      'Zimbelade Hazel Spread',
    ])
  })
})

describe('catalog search: filters', () => {
  test('exclude_allergens drops products containing any; brands and retailers pass', async () => {
    const rows = (await search({ q: 'quorvane', exclude_allergens: ['nuts'] })).json.results
    expect(names(rows.filter((r) => r.type === 'product')).sort()).toEqual([
      'Quorvane Dark Zimbelade',
      'Zimbelade Hazel Spread', // no ingredients given: nothing declared
    ])
    expect(rows.some((r) => r.type === 'brand')).toBe(true)
    const both = (await search({ q: 'zimbelade', exclude_allergens: ['gluten', 'milk'], type: 'product' })).json.results
    expect(names(both).sort()).toEqual(['Quorvane Dark Zimbelade', 'Zimbelade Hazel Spread'])
  })

  test('certifications are all required of products; brand and retailer rows pass through', async () => {
    const rows = (await search({ q: 'quorvane', certifications: ['usda-organic'] })).json.results
    expect(names(rows.filter((r) => r.type === 'product'))).toEqual(['Quorvane Milk Zimbelade'])
    expect(
      rows
        .filter((r) => r.type !== 'product')
        .map((r) => r.type)
        .sort(),
    ).toEqual(['brand', 'retailer'])
    const none = await search({ q: 'quorvane', certifications: ['usda-organic', 'vegan'], type: 'product' })
    expect(none.json.results).toEqual([])
  })

  test('exclude_substances: a confident match drops the product, a weak one is flagged', async () => {
    const rows = (await search({ q: 'pellomar', exclude_substances: ['e250', 'sulphite'], type: 'product' })).json
      .results
    expect(names(rows)).toEqual(['Pellomar Tressel Spread'])
    expect(rows[0]!.substance_flags).toEqual([{ slug: 'sulphite', span: 'sodium metebisulfite', confidence: 0.6 }])
    // the name id of an E-number additive means the same
    const byName = (await search({ q: 'pellomar', exclude_substances: ['sodium-nitrite'], type: 'product' })).json
    expect(names(byName.results)).toEqual(['Pellomar Tressel Spread'])
    expect(byName.results[0]!.substance_flags).toEqual([])
  })

  test('filters combined, in the fallback tiers too', async () => {
    const rows = (
      await search({
        q: 'tressel OR zimbelade',
        exclude_allergens: ['milk'],
        exclude_substances: ['e250'],
        type: 'product',
      })
    ).json.results
    expect(names(rows).sort()).toEqual(['Pellomar Tressel Spread', 'Quorvane Dark Zimbelade', 'Zimbelade Hazel Spread'])
    const fuzzy = (await search({ q: 'zimbelaed', exclude_allergens: ['milk'], type: 'product' })).json.results
    expect(names(fuzzy)).not.toContain('Quorvane Milk Zimbelade')
    expect(fuzzy.length).toBeGreaterThan(0)
  })
})

describe('catalog search: bounds', () => {
  test('q of 1-255 characters; limit 1-100 (larger is capped); bad values are 422 naming the parameter', async () => {
    expect((await search({ q: 'z' })).status).toBe(200)
    expect((await search({ q: 'ž'.repeat(255) })).status).toBe(200)
    for (const [params, field] of [
      [{ q: '' }, 'q'],
      [{ q: 'x'.repeat(256) }, 'q'],
      [{}, 'q'],
      [{ q: 'a', limit: '0' }, 'limit'],
      [{ q: 'a', limit: '-1' }, 'limit'],
      [{ q: 'a', limit: 'ten' }, 'limit'],
      [{ q: 'a', limit: '1.5' }, 'limit'],
      [{ q: 'a', type: 'shop' }, 'type'],
      [{ q: 'a', exclude_allergens: 'peanut' }, 'exclude_allergens'],
      [{ q: 'a', certifications: 'USDA Organic' }, 'certifications'],
    ] as const) {
      const res = await search(params as Record<string, string>)
      expectProblem(res, 422, 'validation_error')
      expect(JSON.stringify(res.json.errors)).toContain(field)
    }
    const capped = await search({ q: 'quorvane', limit: '500' })
    expect(capped.status).toBe(200)
    expect(capped.json.results.length).toBeGreaterThan(2)
  })

  test('a key that is sent must be valid (401); a valid key searches, with its own retailers', async () => {
    expectProblem(await search({ q: 'quorvane' }, 'not-a-real-key'), 401, 'unauthenticated')
    const reader = await createKey(org, 'readonly')
    const own = (await search({ q: 'quorvane', type: 'retailer' }, reader)).json.results
    expect(names(own).sort()).toEqual(['Quorvane Corner Shop', 'Quorvane Market'])
    // anonymous callers and other organizations see the canonical directory only
    expect(names((await search({ q: 'quorvane', type: 'retailer' })).json.results)).toEqual(['Quorvane Market'])
    const other = await createOrganization()
    expect(names((await search({ q: 'quorvane', type: 'retailer' }, other.key)).json.results)).toEqual([
      'Quorvane Market',
    ])
  })
})

describe('scoped search keys without Typesense', () => {
  test('PostgreSQL mode has no Typesense keys to mint: 404 saying what to configure; non-managers 403', async () => {
    const res = await post('/catalog/api/v1/search-keys', {}, org.key)
    expect(res.status).toBe(404)
    expect(res.json).toMatchObject({ code: 'not_found' })
    expect(res.json.detail).toContain('TYPESENSE_SEARCH_API_KEY')
    const readonly = await createKey(org, 'readonly')
    expect((await post('/catalog/api/v1/search-keys', {}, readonly)).status).toBe(403)
  })
})
