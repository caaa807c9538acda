import { describe, expect, test } from 'bun:test'
import { ADMIN, createOrganization, eventually, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { call, get, post } from '../../support/server'

// Issue 45: values are stored as the API stores them, whichever path they come by: ISO country
// codes upper-case (feeds and contributions), and a count ("1 pièce") as net content in EA.

const RUNS = '/feeds/api/v1/runs'

/** Uploads Open Food Facts JSONL lines as the platform and waits for the run to end. */
async function importOff(lines: object[]) {
  const started = await call('POST', `${RUNS}?source=off&file_name=normalised.jsonl`, {
    raw: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
    headers: { 'content-type': 'application/x-ndjson', ...ADMIN },
  })
  expect(started.status).toBe(202)
  return eventually(async () => {
    const run = await call('GET', `${RUNS}/${started.json.id}`, { headers: ADMIN })
    return run.json.status === 'succeeded' || run.json.status === 'failed' ? run.json : null
  }, 30_000)
}

const statements = (gtin: string) =>
  sql<{ fields: Record<string, unknown>; source: string }>(
    `select c.fields, c.source from product_candidates c join products p on p.id = c.product_id
      where p.gtin = $1 order by c.created, c.id`,
    [`0${gtin}`],
  )

describe('country codes', () => {
  test('a feed line with origins "be" is stored and promoted as BE', async () => {
    const gtin = uniqueGtin()
    const run = await importOff([{ code: gtin, product_name: 'Speculoos', origins: 'be', lc: 'fr' }])
    expect(run).toMatchObject({ status: 'succeeded', counts: { read: 1, created: 1, rejected: 0 } })
    const reader = await createOrganization()
    expect((await get(`${PRODUCTS}/${gtin}`, reader.key)).json.country_of_origin).toBe('BE')
    expect(await statements(gtin)).toEqual([
      { fields: { product_name: 'Speculoos', country_of_origin: 'BE' }, source: 'open_food_facts' },
    ])
    const [row] = await sql('select country_of_origin from products where gtin = $1', [`0${gtin}`])
    expect(row).toEqual({ country_of_origin: 'BE' })
  }, 60_000)

  test('a contribution of "us" is stored as US and agrees with another organization’s "US"', async () => {
    const gtin = uniqueGtin()
    expect((await importOff([{ code: gtin, product_name: 'Root beer' }])).status).toBe('succeeded')
    const [first, second] = [await createOrganization(), await createOrganization()]
    const contributed = await post(
      `${PRODUCTS}/${gtin}/contributions`,
      { fields: { country_of_origin: 'us' } },
      first.key,
    )
    expect(contributed.status).toBe(202)
    const crowd = async () => (await statements(gtin)).filter((s) => s.source === 'crowd_sourced')
    expect(await crowd()).toEqual([{ fields: { country_of_origin: 'US' }, source: 'crowd_sourced' }])
    // one contribution alone decides nothing; two organizations agreeing on US do
    expect(
      (await post(`${PRODUCTS}/${gtin}/contributions`, { fields: { country_of_origin: 'US' } }, second.key)).status,
    ).toBe(202)
    const promoted = await eventually(async () => {
      const product = (await get(`${PRODUCTS}/${gtin}`, first.key)).json
      return product.country_of_origin ? product : null
    })
    expect(promoted.country_of_origin).toBe('US')
    expect(await crowd()).toEqual([
      { fields: { country_of_origin: 'US' }, source: 'crowd_sourced' },
      { fields: { country_of_origin: 'US' }, source: 'crowd_sourced' },
    ])
    const [row] = await sql('select country_of_origin from products where gtin = $1', [`0${gtin}`])
    expect(row).toEqual({ country_of_origin: 'US' })
  }, 60_000)
})

describe('net content counted in items', () => {
  test('"1 pièce" is net content 1 EA', async () => {
    const gtin = uniqueGtin()
    const run = await importOff([{ code: gtin, product_name: 'Éclair au chocolat', quantity: '1 pièce', lc: 'fr' }])
    expect(run).toMatchObject({ status: 'succeeded', counts: { read: 1, created: 1, rejected: 0 } })
    const reader = await createOrganization()
    expect((await get(`${PRODUCTS}/${gtin}`, reader.key)).json).toMatchObject({
      net_content: '1 pièce',
      net_content_value: 1,
      net_content_uom: 'EA',
    })
    const [row] = await sql('select net_content, net_content_value, net_content_uom from products where gtin = $1', [
      `0${gtin}`,
    ])
    expect(row).toEqual({ net_content: '1 pièce', net_content_value: 1, net_content_uom: 'EA' })
  }, 60_000)
})
