import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createKey,
  createOrganization,
  eventually,
  expectProblem,
  PRODUCTS,
  sql,
  type TestOrg,
  uniqueGtin,
} from '../../support/fixtures'
import { call, get } from '../../support/server'

// Issue 44, finding 2: who runs an import decides its authority. A run started with the admin
// token is the platform's and carries its source's weight; a run started with an organization's
// key is that organization's statement, weighted as a crowd contribution, and it can neither
// displace another source's candidates nor fill a field of another organization's claimed product.

const RUNS = '/feeds/api/v1/runs'

type Runner = { key: string } | 'platform'
const auth = (runner: Runner) => (runner === 'platform' ? ADMIN : { 'x-api-key': runner.key })

/** One Open Food Facts JSONL line (the dump's format: test/fixtures/feeds/off/products.jsonl). */
const offLine = (gtin: string, fields: Record<string, unknown>) => JSON.stringify({ code: gtin, ...fields })
/** The same product as a row of OFF's tab-separated CSV export (uploaded as text/csv). */
function offCsv(gtin: string, fields: Record<string, string>) {
  const columns = ['code', ...Object.keys(fields)]
  return `${columns.join('\t')}\n${[gtin, ...Object.values(fields)].join('\t')}\n`
}

/** Uploads a feed file and waits for its run to end; returns the final run. */
async function upload(runner: Runner, body: string, type: string, query = '') {
  const started = await call('POST', `${RUNS}?source=off&file_name=authority${query}`, {
    raw: body,
    headers: { 'content-type': type, ...auth(runner) },
  })
  expect(started.status).toBe(202)
  return eventually(async () => {
    const run = await call('GET', `${RUNS}/${started.json.id}`, { headers: auth(runner) })
    expect(run.status).toBe(200)
    return run.json.status === 'succeeded' || run.json.status === 'failed' ? run.json : null
  }, 60_000)
}

const ndjson = (runner: Runner, lines: string[], query = '') =>
  upload(runner, `${lines.join('\n')}\n`, 'application/x-ndjson', query)

let reader: TestOrg | undefined
/** The product as the API shows it (read with a key of an organization that states nothing). */
async function product(gtin: string) {
  reader ??= await createOrganization()
  return (await get(`${PRODUCTS}/${gtin}`, reader.key)).json
}

/** Everything stored of a product that promotion decides: its row and every candidate statement. */
async function stored(gtin: string) {
  const [row] = await sql<Record<string, unknown>>(
    `select id, product_name, description, image_url, ingredients_text, contains_allergens, may_contain_allergens,
            certifications, substances, field_confidence, confidence_score, data_source, modified
       from products where gtin = $1`,
    [`0${gtin}`],
  )
  const candidates = await sql<Record<string, unknown>>(
    `select id, fields, source, confidence, contributor_id, created from product_candidates
      where product_id = $1 order by created, id`,
    [row!.id],
  )
  return { row: row!, candidates }
}

/** The statements an organization has made of a product. */
const statementsOf = (productId: unknown, org: TestOrg) =>
  sql<{ fields: Record<string, unknown>; source: string; confidence: number }>(
    'select fields, source, confidence from product_candidates where product_id = $1 and contributor_id = $2',
    [productId, parseId(org.id)],
  )

const NUTTY = {
  product_name: 'Nutty Milk Bar',
  brands: 'Authority Test',
  ingredients_text: 'Sugar, whole milk powder, hazelnuts, peanuts, cocoa butter',
}
const HOSTILE = {
  product_name: 'Nutty Bar',
  generic_name: 'Now allergen free',
  ingredients_text: 'Sugar, water, cocoa',
  image_url: 'https://attacker.example/bar.png',
}

describe('a tenant run is its organization statement, weighted as a crowd contribution', () => {
  test("a tenant's OFF feed cannot change a platform-imported product's allergens or ingredients", async () => {
    const gtin = uniqueGtin()
    // the platform's import (admin token) carries Open Food Facts' weight and promotes at once
    const platformRun = await ndjson('platform', [offLine(gtin, NUTTY)])
    expect(platformRun).toMatchObject({ status: 'succeeded', data_source: 'open_food_facts', authority: 'platform' })
    expect(await product(gtin)).toMatchObject({
      product_name: 'Nutty Milk Bar',
      ingredients_text: NUTTY.ingredients_text,
      contains_allergens: ['milk', 'nuts', 'peanuts'],
      field_confidence: { product_name: 0.7, ingredients_text: 0.7 },
      data_source: 'open_food_facts',
    })
    const before = await stored(gtin)
    expect(before.candidates).toEqual([
      expect.objectContaining({ source: 'open_food_facts', contributor_id: null, confidence: expect.closeTo(0.7, 5) }),
    ])

    // a tenant labels its upload `off` and says the bar is allergen free, with its own picture
    const tenant = await createOrganization()
    const run = await ndjson(tenant, [offLine(gtin, HOSTILE)])
    expect(run).toMatchObject({
      status: 'succeeded',
      data_source: 'crowd_sourced',
      authority: 'organization',
      counts: { read: 1, created: 0, updated: 1, rejected: 0 },
    })

    const after = await stored(gtin)
    expect(after.row).toEqual(before.row)
    // the platform's statement is still there, untouched; the tenant's is stored beside it, as its own
    expect(after.candidates.filter((c) => c.contributor_id === null)).toEqual(before.candidates)
    const statements = await statementsOf(before.row.id, tenant)
    expect(statements).toEqual([
      {
        source: 'crowd_sourced',
        confidence: expect.closeTo(0.4, 5),
        fields: expect.objectContaining({
          ingredients_text: HOSTILE.ingredients_text,
          image_url: HOSTILE.image_url,
          description: HOSTILE.generic_name,
        }),
      },
    ])
    const provenance = (await get(`${PRODUCTS}/${gtin}/provenance`, tenant.key)).json
    expect(provenance.fields.ingredients_text).toEqual([
      expect.objectContaining({ source: 'crowd_sourced', contributor_id: tenant.id, canonical: false }),
      expect.objectContaining({ source: 'open_food_facts', contributor_id: null, canonical: true }),
    ])

    // the same tenant again, with another text: its own earlier statement is replaced, nothing else
    const again = await ndjson(tenant, [offLine(gtin, { ...HOSTILE, ingredients_text: 'Water' })])
    expect(again.status).toBe('succeeded')
    const last = await stored(gtin)
    expect(last.row).toEqual(before.row)
    expect(last.candidates.filter((c) => c.contributor_id === null)).toEqual(before.candidates)
    expect((await statementsOf(before.row.id, tenant)).map((s) => s.fields.ingredients_text)).toEqual(['Water'])
  }, 120_000)

  test("no tenant run fills a field of another organization's claimed product, even when tenants agree", async () => {
    const owner = await createOrganization()
    const gtin = uniqueGtin()
    const created = await call('POST', PRODUCTS, { key: owner.key, body: { gtin, product_name: 'Owner Bar' } })
    expect(created.status).toBe(201)
    const before = await stored(gtin)

    // two organizations state the same values (agreement that would promote an unclaimed product's field)
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const fields = {
      product_name: 'Tenant Bar',
      generic_name: 'Tenant description',
      image_url: 'https://attacker.example/owner-bar.png',
      ingredients_text: 'Sugar, water',
    }
    for (const tenant of [a, b]) {
      const run = await upload(tenant, offCsv(gtin, fields), 'text/csv')
      expect(run).toMatchObject({ status: 'succeeded', format: 'off_csv', counts: { read: 1, rejected: 0 } })
    }
    const after = await stored(gtin)
    expect(after.row).toEqual(before.row)
    expect(after.row).toMatchObject({ description: '', image_url: '', ingredients_text: '' })
    expect(after.candidates.filter((c) => c.source === 'claimed')).toEqual(before.candidates)
    for (const tenant of [a, b])
      expect(await statementsOf(before.row.id, tenant)).toEqual([
        expect.objectContaining({
          source: 'crowd_sourced',
          fields: expect.objectContaining({ image_url: fields.image_url }),
        }),
      ])
    const provenance = (await get(`${PRODUCTS}/${gtin}/provenance`, owner.key)).json
    expect(provenance.fields.description.map((c: any) => c.canonical)).toEqual([false, false])

    // a platform source still fills a field the owner left open (the rule for claimed products as before)
    await ndjson('platform', [offLine(gtin, { product_name: 'Platform Bar', generic_name: 'Platform description' })])
    expect(await product(gtin)).toMatchObject({
      product_name: 'Owner Bar',
      description: 'Platform description',
      image_url: '',
      ingredients_text: '',
    })
  }, 120_000)

  test('one organization alone never promotes a value; two independent ones agreeing do (the crowd rule)', async () => {
    const gtin = uniqueGtin()
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const line = offLine(gtin, { product_name: 'Crowd Granola', brands: 'Crowd Co' })
    expect((await ndjson(a, [line])).counts).toMatchObject({ created: 1 })
    // the product exists (its offers or later statements need it), with nothing promoted
    expect(await product(gtin)).toMatchObject({ product_name: '', brand: '', field_confidence: {} })
    // the same organization again is not independent
    await ndjson(a, [offLine(gtin, { product_name: 'Crowd Granola', brands: 'Crowd Co', quantity: '500 g' })])
    expect((await product(gtin)).product_name).toBe('')
    // a second organization agreeing: 1 - (1 - 0.4)² = 0.64 reaches the 0.6 threshold
    await ndjson(b, [line])
    const promoted = await product(gtin)
    expect(promoted).toMatchObject({ product_name: 'Crowd Granola', brand: 'Crowd Co', data_source: 'crowd_sourced' })
    expect(promoted.field_confidence.product_name).toBeCloseTo(0.64, 2)
  }, 120_000)
})

describe('disappeared products and who reads runs', () => {
  test("a tenant's full run compares only with its own earlier full runs", async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const [g1, g2, g3] = [uniqueGtin(), uniqueGtin(), uniqueGtin()]
    const line = (gtin: string) => offLine(gtin, { product_name: `Full ${gtin}` })
    const first = await ndjson(a, [line(g1), line(g2)], '&full=true')
    expect(first.disappeared).toEqual({ count: 0, sample: [] })
    // another tenant's full dump does not report a's products as gone
    const other = await ndjson(b, [line(g3)], '&full=true')
    expect(other.disappeared).toEqual({ count: 0, sample: [] })
    // nor does the platform's
    const platform = await ndjson('platform', [line(g3)], '&full=true')
    expect(platform.disappeared.sample).not.toContain(`0${g1}`)
    expect(platform.disappeared.sample).not.toContain(`0${g2}`)
    // a's own next full dump does
    const second = await ndjson(a, [line(g1)], '&full=true')
    expect(second.disappeared).toEqual({ count: 1, sample: [`0${g2}`] })
    // and the products stay in the catalog
    expect((await get(`${PRODUCTS}/${g2}`, a.key)).status).toBe(200)
  }, 120_000)

  test('any role reads its organization runs; only a manager starts one; the admin token reads platform runs', async () => {
    const org = await createOrganization()
    const readonly = await createKey(org, 'readonly')
    const run = await ndjson(org, [offLine(uniqueGtin(), { product_name: 'Readable' })])
    const list = await get(RUNS, readonly)
    expect(list.status).toBe(200)
    expect(list.json.data.map((r: any) => r.id)).toContain(run.id)
    expect((await get(`${RUNS}/${run.id}`, readonly)).json).toMatchObject({ id: run.id, status: 'succeeded' })

    const runsBefore = await sql<{ n: number }>('select count(*)::int n from feed_runs')
    const refused = await call('POST', `${RUNS}?source=off`, {
      raw: offLine(uniqueGtin(), { product_name: 'Refused' }),
      headers: { 'content-type': 'application/x-ndjson', 'x-api-key': readonly },
    })
    expectProblem(refused, 403, 'forbidden')
    expect(await sql('select count(*)::int n from feed_runs')).toEqual(runsBefore)

    // another organization's run is 404; a tenant's run is not the platform's to read
    const stranger = await createOrganization()
    expectProblem(await get(`${RUNS}/${run.id}`, stranger.key), 404, 'not_found')
    expectProblem(await get(`${RUNS}/${run.id}`, undefined, ADMIN), 404, 'not_found')
    const platformRun = await ndjson('platform', [offLine(uniqueGtin(), { product_name: 'Platform run' })])
    const platformList = await get(`${RUNS}?page_size=100`, undefined, ADMIN)
    expect(platformList.status).toBe(200)
    const ids = platformList.json.data.map((r: any) => r.id)
    expect(ids).toContain(platformRun.id)
    expect(ids).not.toContain(run.id)
    expect((await get(RUNS, stranger.key)).json.data).toEqual([])
    expectProblem(await get(RUNS), 401, 'unauthenticated')
  }, 120_000)
})
