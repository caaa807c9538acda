import { describe, expect, test } from 'bun:test'
import { contribute, promoteProduct } from '../../../src/catalog/promotion'
import { db } from '../../../src/db/client'
import { transaction } from '../../../src/db/tx'
import { parseId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
import {
  createKey,
  createOrganization,
  expectProblem,
  PRODUCTS,
  sql,
  tableCounts,
  uniqueGtin,
} from '../../support/fixtures'
import { get, patch, post } from '../../support/server'

const productIdOf = async (gtin: string) =>
  (await sql<{ id: string }>('select id from products where gtin = $1', [gtin.padStart(14, '0')]))[0]!.id

/** A product whose brand owner left product_name and description empty, then unclaimed it. */
async function unclaimedProduct() {
  const owner = await createOrganization()
  const gtin = uniqueGtin()
  await post(PRODUCTS, { gtin, manufacturer: 'Owner Foods' }, owner.key)
  await post(`${PRODUCTS}/${gtin}/claim`, {}, owner.key)
  await (await import('../../support/server')).del(`${PRODUCTS}/${gtin}`, owner.key)
  return { owner, gtin }
}

describe('ingredients on the product', () => {
  test('create parses ingredients_text into allergens, traces, certifications and substances; patch re-parses', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const res = await post(
      PRODUCTS,
      { gtin, ingredients_text: 'Organic oats, whole milk powder, palm oil. May contain hazelnuts.' },
      org.key,
    )
    expect(res.status).toBe(201)
    expect(res.json.contains_allergens).toEqual(['gluten', 'milk'])
    expect(res.json.may_contain_allergens).toEqual(['nuts'])
    expect(res.json.certifications).toEqual(['organic'])
    expect(res.json.substances.map((s: { slug: string }) => s.slug).sort()).toEqual(['milk', 'oat', 'palm-oil'])
    const stored = await sql<{ contains_allergens: string[] }>(
      'select contains_allergens from products where gtin = $1',
      [`0${gtin}`],
    )
    expect(stored[0]!.contains_allergens).toEqual(['gluten', 'milk'])
    const patched = await patch(`${PRODUCTS}/${gtin}`, { ingredients_text: 'Water, sesame seeds' }, org.key)
    expect(patched.json).toMatchObject({
      contains_allergens: ['sesame-seeds'],
      may_contain_allergens: [],
      certifications: [],
    })
    const untouched = await patch(`${PRODUCTS}/${gtin}`, { description: 'no ingredient change' }, org.key)
    expect(untouched.json.contains_allergens).toEqual(['sesame-seeds']) // omitted: not parsed again
  })
})

describe('provenance and confidence promotion', () => {
  test('one crowd contribution alone does not change a canonical field; two independent agreeing ones do', async () => {
    const { gtin } = await unclaimedProduct()
    const [c1, c2, c3] = await Promise.all([createOrganization(), createOrganization(), createOrganization()])
    const first = await post(
      `${PRODUCTS}/${gtin}/contributions`,
      { fields: { product_name: 'Crunchy Granola' } },
      c1.key,
    )
    expect(first.status).toBe(202)
    expect(first.json).toEqual({ gtin: `0${gtin}`, accepted: ['product_name'], status: 'queued for promotion' })
    await promoteProduct(db, await productIdOf(gtin))
    expect((await get(`${PRODUCTS}/${gtin}`, c1.key)).json.product_name).toBe('')
    // the same organization again is not independent
    await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { product_name: 'Crunchy Granola' } }, c1.key)
    await promoteProduct(db, await productIdOf(gtin))
    expect((await get(`${PRODUCTS}/${gtin}`, c1.key)).json.product_name).toBe('')
    // a disagreeing value does not help either
    await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { product_name: 'Granola Crunch' } }, c3.key)
    await promoteProduct(db, await productIdOf(gtin))
    expect((await get(`${PRODUCTS}/${gtin}`, c1.key)).json.product_name).toBe('')

    await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { product_name: 'Crunchy Granola' } }, c2.key)
    // the queued catalog.promote job (pg-boss) folds it in
    const product = await eventually(
      async () => {
        const read = (await get(`${PRODUCTS}/${gtin}`, c1.key)).json
        return read.product_name === 'Crunchy Granola' && read
      },
      20_000,
      'the promotion job to fold the contribution in',
    )
    expect(product.product_name).toBe('Crunchy Granola')
    expect(product.data_source).toBe('crowd_sourced')
    expect(product.field_confidence.product_name).toBeCloseTo(0.64, 2)
    expect(product.confidence_score).toBeGreaterThan(0)
    expect(product.confidence_score).toBeLessThanOrEqual(1)
    // idempotent
    expect(await promoteProduct(db, await productIdOf(gtin))).toBe(false)
    // a product no organization holds emits no per-product event (contract §7): nobody could receive it
    const events = await sql<{ n: number }>(
      "select count(*)::int n from events where subject_id = $1 and event_type = 'product.updated'",
      [await productIdOf(gtin)],
    )
    expect(events[0]!.n).toBe(0)
  })

  test('a claimed (brand-owner) value is never overridden by crowd contributions', async () => {
    const owner = await createOrganization()
    const gtin = uniqueGtin()
    await post(PRODUCTS, { gtin, product_name: 'Official Name' }, owner.key)
    const crowd = await Promise.all([createOrganization(), createOrganization(), createOrganization()])
    for (const c of crowd)
      await post(
        `${PRODUCTS}/${gtin}/contributions`,
        { fields: { product_name: 'Crowd Name', description: 'Crowd text' } },
        c.key,
      )
    await promoteProduct(db, await productIdOf(gtin))
    const product = (await get(`${PRODUCTS}/${gtin}`, owner.key)).json
    expect(product.product_name).toBe('Official Name')
    expect(product.data_source).toBe('claimed')
    expect(product.field_confidence.product_name).toBe(1)
    // the owner never set it, and three agreeing organizations do not either: other organizations'
    // statements decide no field of a claimed product (issue 44); they are kept, not canonical
    expect(product.description).toBe('')
    const provenance = (await get(`${PRODUCTS}/${gtin}/provenance`, owner.key)).json
    expect(provenance.fields.description.map((c: any) => [c.value, c.canonical])).toEqual([
      ['Crowd text', false],
      ['Crowd text', false],
      ['Crowd text', false],
    ])
    // the owner's later value wins at once
    expect((await patch(`${PRODUCTS}/${gtin}`, { description: 'Owner text' }, owner.key)).json.description).toBe(
      'Owner text',
    )
    await promoteProduct(db, await productIdOf(gtin))
    expect((await get(`${PRODUCTS}/${gtin}`, owner.key)).json.description).toBe('Owner text')
  })

  test('crowd values with prohibited date labels are stored and flagged, not rejected', async () => {
    const { gtin } = await unclaimedProduct()
    const [c1, c2] = await Promise.all([createOrganization(), createOrganization()])
    for (const c of [c1, c2]) {
      const res = await post(
        `${PRODUCTS}/${gtin}/contributions`,
        { fields: { description: 'Sell by date on lid' } },
        c.key,
      )
      expect(res.status).toBe(202)
    }
    await promoteProduct(db, await productIdOf(gtin))
    const product = (await get(`${PRODUCTS}/${gtin}`, c1.key)).json
    expect(product.description).toBe('Sell by date on lid')
    expect(product.date_label_compliance).toEqual({
      ca_ab660: 'non_compliant',
      federal: 'unknown',
      notes: [expect.stringContaining('description: prohibited date label "sell by"')],
    })
  })

  test('provenance lists candidates per field with source, confidence and the canonical one', async () => {
    const owner = await createOrganization()
    const gtin = uniqueGtin()
    await post(PRODUCTS, { gtin, product_name: 'Official' }, owner.key)
    const c = await createOrganization()
    await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { product_name: 'Other' } }, c.key)
    const res = await get(`${PRODUCTS}/${gtin}/provenance`, c.key)
    expect(res.status).toBe(200)
    expect(res.json.gtin).toBe(`0${gtin}`)
    expect(res.json.fields.product_name).toEqual([
      {
        value: 'Other',
        source: 'crowd_sourced',
        confidence: expect.closeTo(0.4, 5),
        contributor_id: c.id,
        created: expect.any(String),
        canonical: false,
      },
      {
        value: 'Official',
        source: 'claimed',
        confidence: 1,
        contributor_id: owner.id,
        created: expect.any(String),
        canonical: true,
      },
    ])
  })

  test('contributions: 404 unknown GTIN, 422 empty or unknown fields, readonly 403; nothing written', async () => {
    const org = await createOrganization()
    const ro = await createKey(org, 'readonly')
    const gtin = uniqueGtin()
    await post(PRODUCTS, { gtin }, org.key)
    const before = await tableCounts()
    expectProblem(
      await post(`${PRODUCTS}/${uniqueGtin()}/contributions`, { fields: { product_name: 'x' } }, org.key),
      404,
      'not_found',
    )
    expectProblem(await post(`${PRODUCTS}/${gtin}/contributions`, { fields: {} }, org.key), 422, 'validation_error')
    expectProblem(
      await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { brand: 'x' } }, org.key),
      422,
      'validation_error',
    )
    expectProblem(
      await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { product_name: 'x' } }, ro),
      403,
      'forbidden',
    )
    expect(await tableCounts()).toEqual(before)
    const jobs = await sql<{ n: number }>(
      "select count(*)::int n from pgboss.job where name = 'catalog.promote' and data->>'productId' = $1",
      [await productIdOf(gtin)],
    )
    expect(jobs[0]!.n).toBe(0)
  })

  test('a contribution and its promotion job are written together', async () => {
    const { gtin } = await unclaimedProduct()
    const c = await createOrganization()
    await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { description: 'x' } }, c.key)
    const id = await productIdOf(gtin)
    const jobs = await sql<{ n: number }>(
      "select count(*)::int n from pgboss.job where name = 'catalog.promote' and data->>'productId' = $1",
      [id],
    )
    expect(jobs[0]!.n).toBe(1)
    expect(parseId(id)).toBe(id)
  })

  test('a contribution rolled back leaves no promotion job: the job is sent in its transaction', async () => {
    const { gtin } = await unclaimedProduct()
    const c = await createOrganization()
    const id = await productIdOf(gtin)
    const failed = await transaction(async (tx) => {
      const accepted = await contribute(tx, parseId(c.id)!, gtin, { description: 'never kept' })
      expect(accepted.status).toBe('queued for promotion')
      throw new Error('the caller gives up')
    }).catch((err: Error) => err.message)
    expect(failed).toBe('the caller gives up')
    const jobs = await sql<{ n: number }>(
      "select count(*)::int n from pgboss.job where name = 'catalog.promote' and data->>'productId' = $1",
      [id],
    )
    expect(jobs[0]!.n).toBe(0)
    const candidates = await sql('select 1 from product_candidate_values where product_id = $1 and value = $2', [
      id,
      JSON.stringify('never kept'),
    ])
    expect(candidates).toEqual([])
  })
})
