import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql as q } from 'drizzle-orm'
import { insertDecidedProducts } from '../../../src/catalog/promotion'
import { candidateRows } from '../../../src/catalog/provenance'
import { db } from '../../../src/db/client'
import { arrayParam } from '../../../src/db/params'
import { transaction } from '../../../src/db/tx'
import {
  drainSearchMarks,
  markSearchDocuments,
  pendingSearchDocuments,
  refreshSearchDocuments,
  reindexAll,
} from '../../../src/search'
import { DRAIN_BATCH } from '../../../src/search/marks'
import { search as searchCatalog } from '../../../src/search/search'
import type { SearchInput } from '../../../src/search/types'
import {
  ADMIN,
  createOrganization,
  eventsSettled,
  eventually,
  PRODUCTS,
  RETAILERS,
  sql,
  uniqueGtin,
} from '../../support/fixtures'
import { ROOT } from '../../support/process'
import { marksOf } from '../../support/search-marks'
import { get, patch, post } from '../../support/server'

// The search feature's documents (issue 45): their own tables, written in the transaction of a
// write through the API, marked by bulk writers and rebuilt by the `search.documents` drain; the
// catalog rows carry none of it. Made-up words keep these rows apart from other files' rows.
const SEARCH = '/catalog/api/v1/search'
const names = async (query: string, type = 'product') => {
  const res = await get(`${SEARCH}?q=${encodeURIComponent(query)}&type=${type}`)
  expect(res.status).toBe(200)
  return (res.json.results as { name: string }[]).map((r) => r.name)
}
const productId = async (gtin: string) =>
  (await sql<{ id: string }>('select id from products where gtin = $1', [gtin.padStart(14, '0')]))[0]!.id
const document = async (id: string) =>
  (
    await sql<{ title_len: number; search_text: string; contains_allergens: string[]; confident_substances: string[] }>(
      'select title_len, search_text, contains_allergens, confident_substances from search_products where id = $1',
      [id],
    )
  )[0]
const inputOf = (query: string): SearchInput => ({
  q: query,
  types: ['product'],
  limit: 20,
  excludeAllergens: [],
  certifications: [],
  excludeSubstances: [],
  organizationId: null,
})

describe('search documents: written with the catalog row', () => {
  test('a product created through the API is found as soon as it returns; its document is stored with it', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const res = await post(
      PRODUCTS,
      {
        gtin,
        product_name: 'Brimblewood Oat Crumble',
        brand: 'Fennimore Vale',
        ingredients_text: 'oats, whole milk, E250',
      },
      org.key,
    )
    expect(res.status).toBe(201)
    expect(await names('brimblewood crumble')).toEqual(['Brimblewood Oat Crumble'])
    expect(await names('fennimore', 'brand')).toEqual(['Fennimore Vale'])
    const id = await productId(gtin)
    // the filters' copies: the product's allergens, and the slugs of its confident substance matches
    const [row] = await sql<{ contains_allergens: string[]; confident: string[] }>(
      `select contains_allergens, array(select distinct s->>'slug' from jsonb_array_elements(substances) s
        where (s->>'confidence')::float8 >= 0.8 order by 1) as confident from products where id = $1`,
      [id],
    )
    expect(row!.contains_allergens).toContain('milk')
    expect(row!.confident).toContain('e250')
    expect(await document(id)).toEqual({
      title_len: 5,
      search_text: 'brimblewood oat crumble fennimore vale',
      contains_allergens: row!.contains_allergens,
      confident_substances: row!.confident,
    })
    // PostgreSQL mode: written in the transaction, nothing left for the drain
    expect(await marksOf(id)).toBe(0)
    const words = await sql<{ word: string }>(
      `select word from search_words where word in ('brimblewood', 'crumble', 'fennimore') order by word`,
    )
    expect(words.map((w) => w.word)).toEqual(['brimblewood', 'crumble', 'fennimore'])

    const renamed = await patch(`${PRODUCTS}/${gtin}`, { product_name: 'Brimblewood Rye Crumble' }, org.key)
    expect(renamed.status).toBe(200)
    expect(await names('brimblewood rye')).toEqual(['Brimblewood Rye Crumble'])
    // the old name as a phrase (the typo tier, which may drop a word it cannot correct, never
    // rewrites a phrase): the document no longer says it
    expect(await names('"brimblewood oat crumble"')).toEqual([])
    expect((await document(id))?.search_text).toBe('brimblewood rye crumble fennimore vale')
  })

  test("a retailer's document carries its visibility: deactivated, it is no longer found", async () => {
    const org = await createOrganization()
    const res = await post(RETAILERS, { name: 'Quillomere Market', is_canonical: true }, org.key, ADMIN)
    expect(res.status).toBe(201)
    expect(await names('quillomere', 'retailer')).toEqual(['Quillomere Market'])
    const off = await patch(`${RETAILERS}/${res.json.id}`, { is_active: false }, org.key)
    expect(off.status).toBe(200)
    expect(await names('quillomere', 'retailer')).toEqual([])
    const [doc] = await sql<{ is_active: boolean; is_canonical: boolean }>(
      `select d.is_active, d.is_canonical from search_retailers d join retailers r on r.id = d.id
      where r.name = 'Quillomere Market'`,
    )
    expect(doc).toEqual({ is_active: false, is_canonical: true })
  })
})

describe('search documents: bulk writers mark, the drain builds', () => {
  test('products written with search later are marked in the transaction and found once the drain ran', async () => {
    const id = crypto.randomUUID()
    const gtin = uniqueGtin().padStart(14, '0')
    // inside the writer's transaction: made and marked, not yet searchable
    const seen = await transaction(async (tx) => {
      const candidates = candidateRows(
        id,
        { product_name: 'Vornacle Pepper Brittle', brand: 'Ostrelline' },
        'open_food_facts',
        null,
      )
      const made = await insertDecidedProducts(tx, [{ id, gtin, dataSource: 'open_food_facts', candidates }], {
        search: 'later',
      })
      expect([...made]).toEqual([id])
      await markSearchDocuments(tx, 'product', [id, id]) // again: a second set, the id in it once
      const marks = await tx.execute<{ collection: string; size: number }>(
        q`select collection, size from search_bulk_marks
          where ${id} = any(ids) or ids && array(select brand_id from products where id = ${id})`,
      )
      return {
        marks: marks.rows.map((m) => `${m.collection} ${m.size}`).sort(),
        pending: await pendingSearchDocuments(tx),
        found: await searchCatalog(tx, inputOf('vornacle')),
      }
    })
    expect(seen.marks).toEqual(['brand 1', 'product 1', 'product 1'])
    expect(seen.pending).toBeGreaterThanOrEqual(2)
    expect(seen.found).toEqual([])
    // committed: the search.documents worker of this process drains the marks
    await eventually(async () => ((await names('vornacle brittle')).length > 0 ? true : null))
    expect(await names('vornacle brittle')).toEqual(['Vornacle Pepper Brittle'])
    expect(await names('ostrelline', 'brand')).toEqual(['Ostrelline'])
    await eventually(async () => ((await marksOf(id)) === 0 ? true : null))
    expect((await document(id))?.search_text).toBe('vornacle pepper brittle ostrelline')
    // the names' words follow the drain's commit: a typo of the new name finds it
    await eventually(async () =>
      (await sql(`select 1 from search_words where word = 'vornacle'`)).length > 0 ? true : null,
    )
    const typo = await get(`${SEARCH}?q=vornalce&type=product`)
    expect(typo.json.results.map((r: { name: string; match: string }) => [r.name, r.match])).toEqual([
      ['Vornacle Pepper Brittle', 'fuzzy'],
    ])
  })

  test('two writers marking at once do not wait for each other (the wake-up job is not deduplicated)', async () => {
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()]
    let release = () => {}
    const held = new Promise<void>((done) => {
      release = done
    })
    let marked = () => {}
    const first = new Promise<void>((done) => {
      marked = done
    })
    // A marks and stays open; B marks and commits meanwhile (a wait would hit B's lock timeout)
    const writerA = transaction(async (tx) => {
      await markSearchDocuments(tx, 'product', [a])
      marked()
      await held
    })
    await first
    const writerB = await transaction(async (tx) => {
      await tx.execute(q`set local lock_timeout = '3s'`)
      await markSearchDocuments(tx, 'product', [b])
      return 'committed'
    }).catch((err: Error) => err.message)
    release()
    await writerA
    expect(writerB).toBe('committed')
    // rows that do not exist: the drain takes the marks and writes no document
    await eventually(async () => ((await marksOf(a)) + (await marksOf(b)) === 0 ? true : null))
    expect(await document(a)).toBeUndefined()
  })

  test("a bulk writer's marks wait while bulk writers are busy, an API write's do not, and an ended import releases them", async () => {
    // the marks earlier files of this lane left are built first: one older than BULK_MAX_WAIT_SECONDS
    // releases every bulk mark, this test's too (it read 0 below once, near the end of a full run)
    await eventsSettled()
    await drainSearchMarks(undefined, { now: true })
    // rows that do not exist: the drain takes their marks and writes no document
    const [bulk, api, ended] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
    await transaction((tx) => markSearchDocuments(tx, 'product', [bulk]))
    // a write through the API marks its row too in Typesense mode (not as a bulk writer)
    await sql(`insert into search_index_pending (collection, id) values ('product', $1)`, [api])
    await drainSearchMarks()
    expect(await marksOf(api)).toBe(0)
    // marked a moment ago: its writer may still be writing (a feed import), so it waits
    expect(await marksOf(bulk)).toBe(1)
    // the bulk writers have gone quiet: taken
    await sql(`update search_bulk_marks set marked = now() - interval '1 minute' where $1::uuid = any(ids)`, [bulk])
    await drainSearchMarks()
    expect(await marksOf(bulk)).toBe(0)
    // a feed run that ended wakes the drain for them at once (drainBulkMarksNow)
    await transaction((tx) => markSearchDocuments(tx, 'product', [ended]))
    await drainSearchMarks(undefined, { now: true })
    expect(await marksOf(ended)).toBe(0)
  })

  test("a bulk writer's marks are one row per statement, cut to the drain's step; the drain takes them whole", async () => {
    // rows that do not exist: the drain takes their marks and writes no document
    const ids = Array.from({ length: DRAIN_BATCH + 1 }, () => crypto.randomUUID())
    await transaction((tx) => markSearchDocuments(tx, 'product', [...ids, ids[0]!]))
    const sets = await sql<{ size: number; n: number }>(
      'select size, cardinality(ids) as n from search_bulk_marks where ids && $1::uuid[] order by size desc',
      [ids],
    )
    expect(sets).toEqual([
      { size: DRAIN_BATCH, n: DRAIN_BATCH },
      { size: 1, n: 1 },
    ])
    await drainSearchMarks(undefined, { now: true })
    expect(await sql('select 1 from search_bulk_marks where ids && $1::uuid[]', [ids])).toEqual([])
  })

  test('search reindex builds the documents of rows written behind the writers, and drops stale words', async () => {
    const gtin = uniqueGtin().padStart(14, '0')
    await sql(`insert into products (gtin, product_name) values ($1, 'Thrumblecask Ginger Cordial')`, [gtin])
    await sql(`insert into search_words (word) values ('zzqxstaleword') on conflict do nothing`)
    expect(await names('thrumblecask')).toEqual([])
    const totals = await reindexAll(db, () => {})
    expect(totals.product).toBeGreaterThan(0)
    expect(await names('thrumblecask')).toEqual(['Thrumblecask Ginger Cordial'])
    expect((await document(await productId(gtin)))?.title_len).toBe(3)
    expect(await sql(`select word from search_words where word = 'zzqxstaleword'`)).toEqual([])
    expect(await sql(`select word from search_words where word = 'thrumblecask'`)).toEqual([{ word: 'thrumblecask' }])
  })
})

describe('search documents: off the catalog rows', () => {
  test('products, brands and retailers carry no search column, and no search trigger', async () => {
    const columns = await sql<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
      where table_schema = 'public' and table_name in ('products', 'brands', 'retailers')
        and (data_type = 'tsvector' or column_name in ('search_text', 'title_len', 'brand_name'))`,
    )
    expect(columns).toEqual([])
    // triggers of other features may count rows; none keeps search state or the brand's name
    const triggers = await sql<{ tgname: string; fn: string }>(
      `select tgname, tgfoid::regproc::text as fn from pg_trigger where not tgisinternal
        and tgrelid in ('products'::regclass, 'brands'::regclass, 'retailers'::regclass)`,
    )
    expect(triggers.filter((t) => /search|brand_name|rename/.test(`${t.tgname} ${t.fn}`))).toEqual([])
    const functions = await sql<{ proname: string }>(
      `select proname from pg_proc
      where proname in ('search_words_collect', 'products_brand_name', 'brands_rename_products')`,
    )
    expect(functions).toEqual([])
  })

  test("documents are what the catalog rows' generated columns were, and what migration 0024 built", async () => {
    const org = await createOrganization()
    const bodies = [
      { gtin: uniqueGtin(), product_name: 'Crème Brûlée Dessert Crème', brand: 'Ölmühle & Söhne' },
      { gtin: uniqueGtin(), product_name: 'Pan-Fried Gnocchi 12-pack', manufacturer: 'Gnocchi Works' },
      {
        gtin: uniqueGtin(),
        product_name: 'Salami Piccante',
        brand: 'Salumi Rossi',
        description: 'Cured, smoked',
        ingredients_text: 'pork, salt, sodium nitrite, sodium metabisulfite',
      },
    ]
    for (const body of bodies) expect((await post(PRODUCTS, body, org.key)).status).toBe(201)
    const ids: string[] = []
    for (const b of bodies) ids.push(await productId(b.gtin))
    // the expressions of the generated columns this replaced (migrations 0007, 0010 and 0016)
    const v = (expression: string, weight: string) =>
      `setweight(to_tsvector('catalog'::regconfig, ${expression}), '${weight}')`
    const brand = `coalesce(b.name, '')`
    const title = `${v('p.product_name', 'A')} || ${v(brand, 'B')} || ${v(`p.gtin::text || ' ' || ltrim(p.gtin, '0')`, 'A')}`
    const len = `least(length(to_tsvector('catalog'::regconfig, p.product_name::text || ' ' || ${brand}::text)), 32767)`
    const before = await sql<{ n: number }>(
      `select count(*)::int as n from products p left join brands b on b.id = p.brand_id
        join search_products d on d.id = p.id
      where p.id = any($1::uuid[])
        and d.search_vector = ${v('p.product_name', 'A')} || ${v('p.manufacturer', 'C')} || ${v('p.description', 'C')}
          || ${v('p.ingredients_text', 'D')} || ${v(brand, 'B')} || ${v(`p.gtin::text || ' ' || ltrim(p.gtin, '0')`, 'A')}
        and d.title_vector = ${title} and d.title_len = ${len}
        and d.title_keys = catalog_title_keys(${title}, ${len})
        and d.search_text = catalog_fold(p.product_name::text || ' ' || ${brand}::text)`,
      [ids],
    )
    expect(before[0]!.n).toBe(3)

    // the migration's statements, run into temporary tables of the same names (they come first on
    // the search path), give the same documents
    const migration = readFileSync(join(ROOT, 'src/db/migrations/0024_search_documents.sql'), 'utf8')
    const inserts = migration.split('--> statement-breakpoint').filter((s) => /^\s*INSERT INTO search_/m.test(s))
    expect(inserts).toHaveLength(3)
    const differing = await transaction(async (tx) => {
      for (const t of ['search_products', 'search_brands', 'search_retailers'])
        await tx.execute(q.raw(`create temporary table ${t} (like public.${t}) on commit drop`))
      for (const s of inserts) await tx.execute(q.raw(s))
      const rows = await tx.execute<{ n: number }>(q`select
          (select count(*) from pg_temp.search_products t join public.search_products d using (id)
            where (t.*)::text is distinct from (d.*)::text and t.id = any(${arrayParam(ids, 'uuid')}))
        + (select count(*) from pg_temp.search_brands t join public.search_brands d using (id)
            where (t.*)::text is distinct from (d.*)::text
              and t.id in (select brand_id from products where id = any(${arrayParam(ids, 'uuid')})))
        + (select count(*) from pg_temp.search_products t where t.id = any(${arrayParam(ids, 'uuid')})) - 3 as n`)
      return Number(rows.rows[0]!.n)
    })
    expect(differing).toBe(0)
  })

  test('refreshing unchanged rows writes nothing; a row that is gone loses its document', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    expect((await post(PRODUCTS, { gtin, product_name: 'Wendlecroft Scone' }, org.key)).status).toBe(201)
    const id = await productId(gtin)
    const at = async () =>
      (await sql<{ xmin: string }>('select xmin::text from search_products where id = $1', [id]))[0]?.xmin
    const first = await at()
    await transaction((tx) => refreshSearchDocuments(tx, 'product', [id]))
    expect(await at()).toBe(first)
    const gone = await transaction(async (tx) => {
      await tx.execute(q`delete from product_candidates where product_id = ${id}`)
      await tx.execute(q`delete from products where id = ${id}`)
      await refreshSearchDocuments(tx, 'product', [id])
      const left = await tx.execute(q`select 1 from search_products where id = ${id}`)
      throw Object.assign(new Error('roll back'), { left: left.rows.length })
    }).catch((err: Error & { left?: number }) => err.left)
    expect(gone).toBe(0)
  })
})
