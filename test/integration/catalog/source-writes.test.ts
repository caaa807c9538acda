import { describe, expect, test } from 'bun:test'
import { brandKey, brandsFor, ensureUnownedBrands } from '../../../src/catalog/brands'
import { readGtin, readTradeGtin } from '../../../src/catalog/gtin'
import { promoteProduct } from '../../../src/catalog/promotion'
import { upsertFromSource, writeSourceRecords } from '../../../src/catalog/source-writes'
import { db } from '../../../src/db/client'
import { transaction } from '../../../src/db/tx'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, eventually, PRODUCTS, sql, unique, uniqueGtin } from '../../support/fixtures'
import { get, post } from '../../support/server'

// The feeds' write path: many products in one transaction, values as candidates of their source,
// never over a brand owner's claim.
describe('upsertFromSource', () => {
  test('new GTINs become unclaimed products; values are candidates; promotion decides; claims survive', async () => {
    const org = await createOrganization()
    const claimed = uniqueGtin()
    expect((await post(PRODUCTS, { gtin: claimed, product_name: 'Owner Name' }, org.key)).status).toBe(201)
    const fresh = [uniqueGtin(), uniqueGtin()]
    const { ids, created } = await transaction((tx) =>
      upsertFromSource(tx, 'open_food_facts', [
        { gtin14: `0${fresh[0]}`, fields: { product_name: 'Feed Oats', country_of_origin: 'fr', brand: 'Feedco' } },
        { gtin14: `0${fresh[1]}`, fields: { product_name: 'Feed Rice', net_content_value: 500, description: '' } },
        { gtin14: `0${claimed}`, fields: { product_name: 'Feed Name For Claimed' } },
      ]),
    )
    expect(created.sort()).toEqual(fresh.map((g) => `0${g}`).sort())
    expect(ids.size).toBe(3)

    const rows = await sql<{ gtin: string; owner_id: string | null; data_source: string; product_name: string }>(
      'select gtin, owner_id, data_source, product_name from products where gtin = any($1) order by gtin',
      [[...fresh, claimed].map((g) => `0${g}`)],
    )
    const byGtin = Object.fromEntries(rows.map((r) => [r.gtin, r]))
    for (const g of fresh)
      expect(byGtin[`0${g}`]).toEqual({
        gtin: `0${g}`,
        owner_id: null,
        data_source: 'open_food_facts',
        product_name: '',
      })
    expect(byGtin[`0${claimed}`]!.product_name).toBe('Owner Name')

    const candidates = await sql<{ field: string; value: unknown; source: string }>(
      'select field, value, source from product_candidate_values where product_id = $1 order by field',
      [ids.get(`0${fresh[0]}`)],
    )
    expect(candidates).toEqual([
      { field: 'brand', value: 'Feedco', source: 'open_food_facts' },
      { field: 'country_of_origin', value: 'FR', source: 'open_food_facts' }, // normalised as the API stores it
      { field: 'product_name', value: 'Feed Oats', source: 'open_food_facts' },
    ])
    // a record's values are one statement: one stored row holds the three
    const statements = await sql<{ fields: Record<string, unknown> }>(
      'select fields from product_candidates where product_id = $1',
      [ids.get(`0${fresh[0]}`)],
    )
    expect(statements).toEqual([{ fields: { brand: 'Feedco', country_of_origin: 'FR', product_name: 'Feed Oats' } }])
    // one promotion job per product, sent with the writes
    const jobs = await sql<{ n: number }>(
      `select count(*)::int n from pgboss.job where name = 'catalog.promote' and data->>'productId' = any($1)`,
      [[...ids.values()]],
    )
    expect(jobs[0]!.n).toBe(3)
    // the new products belong to nobody: no product.created (contract §7), nobody could receive it
    const events = await sql<{ n: number }>(
      `select count(*)::int n from events where event_type = 'product.created' and subject_id = any($1)`,
      [[ids.get(`0${fresh[0]}`), ids.get(`0${fresh[1]}`)]],
    )
    expect(events[0]!.n).toBe(0)

    for (const id of ids.values()) await promoteProduct(db, id)
    const oats = (await get(`${PRODUCTS}/${fresh[0]}`, org.key)).json
    expect(oats).toMatchObject({
      product_name: 'Feed Oats',
      brand: 'Feedco',
      country_of_origin: 'FR',
      is_claimed: false,
    })
    expect(oats.data_source).toBe('open_food_facts')
    expect((await get(`${PRODUCTS}/${claimed}`, org.key)).json.product_name).toBe('Owner Name') // the claim wins
  })

  test('rolled back with its caller: nothing written', async () => {
    const gtin = `0${uniqueGtin()}`
    await transaction(async (tx) => {
      await upsertFromSource(tx, 'usda_fdc', [{ gtin14: gtin, fields: { product_name: 'Gone' } }])
      throw new Error('chunk failed')
    }).catch(() => {})
    expect(await sql('select id from products where gtin = $1', [gtin])).toEqual([])
  })
})

describe('GTINs read as results, not exceptions', () => {
  test('readGtin and readTradeGtin', () => {
    expect(readGtin('4006381333931')).toEqual({ ok: true, gtin14: '04006381333931', kind: 'gtin13' })
    expect(readGtin('4006381333932')).toEqual({
      ok: false,
      reason: 'wrong check digit: 4006381333932 should end in 1, not 2',
    })
    expect(readGtin('12ab')).toMatchObject({ ok: false })
    expect(readGtin('')).toEqual({ ok: false, reason: 'a GTIN is required' })
    expect(readTradeGtin('2000000000008')).toMatchObject({ ok: false })
    expect((readTradeGtin('2000000000008') as { reason: string }).reason).toContain('restricted circulation')
    expect(readTradeGtin('4006381333931')).toMatchObject({ ok: true, gtin14: '04006381333931' })
  })
})

// Feed chunks: a new product is written once with its decided values, never empty then updated.
describe('writeSourceRecords with decideNew', () => {
  test('new products are made with their promoted values, unannounced (nobody holds them); existing ones are left to promotion', async () => {
    const existing = uniqueGtin()
    await transaction((tx) =>
      writeSourceRecords(tx, 'usda_fdc', [{ gtin14: `0${existing}`, fields: { product_name: 'Usda Name' } }]),
    )
    const fresh = uniqueGtin()
    const brand = `Decidedco ${crypto.randomUUID().slice(0, 8)}`
    const { ids, created } = await transaction((tx) =>
      writeSourceRecords(
        tx,
        'open_food_facts',
        [
          {
            gtin14: `0${fresh}`,
            fields: { product_name: 'Decided Oats', brand, ingredients_text: 'oats, milk', net_content_value: 500 },
          },
          { gtin14: `0${existing}`, fields: { product_name: 'Off Name' } },
        ],
        null,
        { decideNew: true },
      ),
    )
    const freshId = ids.get(`0${fresh}`)!
    expect([...created]).toEqual([freshId])
    const [row] = await sql<Record<string, unknown>>(
      `select p.product_name, p.data_source, p.net_content_value::text, p.contains_allergens, b.name brand,
              p.field_confidence->>'product_name' name_confidence
       from products p left join brands b on b.id = p.brand_id where p.id = $1`,
      [freshId],
    )
    expect(row).toEqual({
      product_name: 'Decided Oats',
      data_source: 'open_food_facts',
      net_content_value: '500',
      contains_allergens: ['gluten', 'milk'], // oats count as a gluten cereal
      brand,
      name_confidence: '0.7',
    })
    // no event: a product no organization holds emits none (contract §7)
    const events = await sql('select event_type from events where subject_id = $1', [freshId])
    expect(events).toEqual([])
    // its candidates are stored as for any product
    const fields = await sql<{ field: string }>(
      'select field from product_candidate_values where product_id = $1 order by field',
      [freshId],
    )
    expect(fields.map((f) => f.field)).toEqual(['brand', 'ingredients_text', 'net_content_value', 'product_name'])
    // the existing product got the candidate; deciding it is the caller's (promotion)
    const [before] = await sql<{ product_name: string }>('select product_name from products where gtin = $1', [
      `0${existing}`,
    ])
    expect(before!.product_name).toBe('')
    const offCandidates = await sql<{ n: number }>(
      `select count(*)::int n from product_candidate_values where product_id = $1 and source = 'open_food_facts'`,
      [ids.get(`0${existing}`)],
    )
    expect(offCandidates[0]!.n).toBe(1)
  })
})

describe('brandsFor', () => {
  test('finds brands without regard to case, per owner, and makes the missing ones once', async () => {
    const org = await createOrganization()
    const orgId = parseId(org.id)!
    const name = `Casey ${crypto.randomUUID().slice(0, 8)}`
    const first = await transaction((tx) =>
      brandsFor(tx, [
        { organizationId: null, name },
        { organizationId: orgId, name },
      ]),
    )
    const unowned = first.get(brandKey(null, name))!
    const owned = first.get(brandKey(orgId, name))!
    expect(unowned).toBeString()
    expect(owned).not.toBe(unowned)
    // other spellings find the same rows; a new name is made beside them
    const other = `${name} Two`
    const again = await transaction((tx) =>
      brandsFor(tx, [
        { organizationId: null, name: name.toUpperCase() },
        { organizationId: orgId, name: name.toLowerCase() },
        { organizationId: null, name: other },
      ]),
    )
    expect(again.get(brandKey(null, name))).toBe(unowned)
    expect(again.get(brandKey(orgId, name))).toBe(owned)
    expect(again.size).toBe(3)
    const rows = await sql<{ name: string; organization_id: string | null }>(
      `select name, organization_id from brands where lower(name) like lower($1) || '%' order by name, organization_id nulls first`,
      [name],
    )
    expect(rows).toEqual([
      { name, organization_id: null },
      { name, organization_id: orgId },
      { name: other, organization_id: null },
    ])
  })
})

// A feed chunk's unowned brands: made when missing in one statement, found by the products' insert.
describe('ensureUnownedBrands', () => {
  const unownedNamed = (name: string) =>
    sql<{ id: string; name: string }>(
      'select id, name from brands where organization_id is null and lower(name) = lower($1) order by name',
      [name],
    )

  test('an existing brand in another case is the one new products name: no second brand', async () => {
    const name = unique('Casing Brand Émile')
    await sql('insert into brands (name) values ($1)', [name])
    const [existing] = await unownedNamed(name)
    const gtins = [`0${uniqueGtin()}`, `0${uniqueGtin()}`, `0${uniqueGtin()}`]
    const fresh = `${name} Two`
    await transaction((tx) =>
      writeSourceRecords(
        tx,
        'open_food_facts',
        [
          { gtin14: gtins[0]!, fields: { product_name: 'Upper Oats', brand: name.toUpperCase() } },
          { gtin14: gtins[1]!, fields: { product_name: 'Lower Oats', brand: name.toLowerCase() } },
          { gtin14: gtins[2]!, fields: { product_name: 'Fresh Oats', brand: fresh.toUpperCase() } },
        ],
        null,
        { decideNew: true },
      ),
    )
    expect(await unownedNamed(name)).toEqual([existing!])
    const [made, ...more] = await unownedNamed(fresh)
    expect(made!.name).toBe(fresh.toUpperCase())
    expect(more).toEqual([])
    const named = await sql<{ gtin: string; brand_id: string }>(
      'select gtin, brand_id from products where gtin = any($1) order by gtin',
      [gtins],
    )
    expect(named.map((p) => p.brand_id)).toEqual(
      gtins
        .map((gtin, n) => ({ gtin, id: n < 2 ? existing!.id : made!.id }))
        .sort((a, b) => (a.gtin < b.gtin ? -1 : 1))
        .map((p) => p.id),
    )
  })

  test('two writers making one new brand at once (in two cases): the second waits for the first, neither fails, one brand', async () => {
    const name = unique('Racing Brand')
    let commit!: () => void
    const held = new Promise<void>((done) => {
      commit = done
    })
    let made!: () => void
    const inserted = new Promise<void>((done) => {
      made = done
    })
    const first = transaction(async (tx) => {
      await ensureUnownedBrands(tx, [name], { search: 'later' })
      made()
      await held
    })
    await inserted
    const second = transaction((tx) =>
      ensureUnownedBrands(tx, [name.toUpperCase(), `${name} Other`], { search: 'later' }),
    )
    // the second's insert waits on the first's uncommitted row of the same name
    await eventually(
      async () =>
        (
          await sql(
            `select 1 from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and query like '%insert into brands (name)%'`,
          )
        ).length > 0,
      20_000,
      'the second writer to wait',
    )
    commit()
    await Promise.all([first, second])
    expect((await unownedNamed(name)).map((b) => b.name)).toEqual([name])
    expect((await unownedNamed(`${name} Other`)).map((b) => b.name)).toEqual([`${name} Other`])
  })
})

// Migration 0035: statements and feed records name their product without a foreign key (a check per
// row was a fifth of a feed chunk's database time); deleting products still takes them along.
describe('statements of a deleted product', () => {
  test("an operator's DELETE of products removes their statements and feed records, and nobody else's", async () => {
    const [gone, kept] = [`0${uniqueGtin()}`, `0${uniqueGtin()}`]
    const { ids } = await transaction((tx) =>
      upsertFromSource(tx, 'open_food_facts', [
        { gtin14: gone, fields: { product_name: 'Deleted Oats' } },
        { gtin14: kept, fields: { product_name: 'Kept Rice' } },
      ]),
    )
    for (const gtin of [gone, kept])
      await sql(
        `insert into feed_records (source, scope, contributor_id, key, gtin, product_id, content_hash, reading, last_run_id)
         values ('open_food_facts', '00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000',
           $1::text, $1::text, $2::uuid, 'h', 'jsonl', gen_random_uuid())`,
        [gtin, ids.get(gtin)],
      )
    const counts = async (gtin: string) => {
      const [row] = await sql<{ statements: number; records: number }>(
        `select (select count(*)::int from product_candidates where product_id = $1) as statements,
           (select count(*)::int from feed_records where product_id = $1) as records`,
        [ids.get(gtin)],
      )
      return row
    }
    expect(await counts(gone)).toEqual({ statements: 1, records: 1 })
    await sql('delete from products where id = $1', [ids.get(gone)])
    expect(await counts(gone)).toEqual({ statements: 0, records: 0 })
    expect(await counts(kept)).toEqual({ statements: 1, records: 1 })
  })

  test('a brand that products still name cannot be deleted; one no product names can', async () => {
    const gtin = `0${uniqueGtin()}`
    const [named, unnamed] = [unique('Named Brand'), unique('Unnamed Brand')]
    // as a feed chunk writes a new product: decided at once, its unowned brand made
    await transaction((tx) =>
      writeSourceRecords(
        tx,
        'open_food_facts',
        [{ gtin14: gtin, fields: { product_name: 'Branded Oats', brand: named } }],
        null,
        {
          decideNew: true,
        },
      ),
    )
    await sql('insert into brands (name) values ($1)', [unnamed])
    const [product] = await sql<{ brand: string }>(
      'select b.name as brand from products p join brands b on b.id = p.brand_id where p.gtin = $1',
      [gtin],
    )
    expect(product!.brand).toBe(named)
    const refused = await sql('delete from brands where name = $1', [named]).catch((err: { code?: string }) => err)
    expect((refused as { code?: string }).code).toBe('23503')
    expect(await sql('select 1 from brands where name = $1', [named])).toHaveLength(1)
    await sql('delete from brands where name = $1', [unnamed])
    expect(await sql('select 1 from brands where name = $1', [unnamed])).toHaveLength(0)
  })

  test('a statement, a feed record or a brand that names no row is refused, as the foreign keys refused it', async () => {
    const missing = crypto.randomUUID()
    const code = (err: unknown) => (err as { code?: string }).code
    const refused = [
      sql(
        `insert into product_candidates (product_id, fields, source, confidence) values ($1::uuid, '{}', 'open_food_facts', 0.7)`,
        [missing],
      ),
      sql(
        `insert into feed_records (source, scope, contributor_id, key, gtin, product_id, content_hash, reading, last_run_id)
         values ('open_food_facts', gen_random_uuid(), gen_random_uuid(), 'k', '00000000000000', $1::uuid, 'h', 'jsonl', gen_random_uuid())`,
        [missing],
      ),
      sql(`insert into products (gtin, brand_id) values ($1, $2::uuid)`, [`0${uniqueGtin()}`, missing]),
    ]
    for (const attempt of refused) expect(code(await attempt.catch((err) => err))).toBe('23503')
    expect(await sql('select 1 from product_candidates where product_id = $1', [missing])).toHaveLength(0)
  })

  test('TRUNCATE: of products takes their statements and feed records along; of brands products name is refused', async () => {
    const client = await db.$client.connect()
    try {
      await client.query('begin')
      await client.query('truncate products cascade')
      const { rows } = await client.query(
        'select (select count(*)::int from product_candidates) as statements, (select count(*)::int from feed_records) as records',
      )
      expect(rows[0]).toEqual({ statements: 0, records: 0 })
      await client.query('rollback')
      await client.query('begin')
      await client.query(`insert into products (gtin, brand_id) select $1, id from brands limit 1`, [
        `0${uniqueGtin()}`,
      ])
      const err = await client.query('truncate brands cascade').catch((e) => e)
      expect(err.code).toBe('23503')
    } finally {
      await client.query('rollback')
      client.release()
    }
  })
})
