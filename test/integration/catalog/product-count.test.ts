import { describe, expect, test } from 'bun:test'
import { createOrganization, PRODUCTS, sql, uniqueGtin } from '../../support/fixtures'
import { get, post } from '../../support/server'

// The unfiltered product list's total comes from a count kept by statement triggers (migration
// 0028), not from counting every row: it must stay exactly count(*) through inserts, deletes,
// rolled-back writes and concurrent creates, and past the last page.
/** count(*) and the kept count, read in one statement (one snapshot: other files' jobs may be writing). */
async function counts() {
  const [row] = await sql<{ counted: string; kept: string }>(
    'select (select count(*) from products) as counted, (select coalesce(sum(delta), 0) from product_count_deltas) as kept',
  )
  return { counted: Number(row!.counted), kept: Number(row!.kept) }
}
const listed = async (query = 'page_size=1') => {
  const res = await get(`${PRODUCTS}?${query}`, (await owner).key)
  expect(res.status).toBe(200)
  return res.json.pagination.total_count as number
}
/** The list's total beside count(*), read until no other writer moved it in between. */
async function listedAndCounted() {
  for (;;) {
    const before = (await counts()).counted
    const total = await listed()
    if ((await counts()).counted === before) return { total, counted: before }
  }
}
const owner = createOrganization()

describe('product count at scale', () => {
  test('the kept count is count(*) after concurrent creates, SQL inserts and deletes, and a rolled-back insert', async () => {
    const org = await owner
    const created = await Promise.all(
      Array.from({ length: 12 }, () => post(PRODUCTS, { gtin: uniqueGtin(), product_name: 'Counted' }, org.key)),
    )
    expect(created.map((r) => r.status)).toEqual(Array(12).fill(201))
    const gtins = Array.from({ length: 5 }, () => uniqueGtin().padStart(14, '0'))
    await sql(
      `insert into products (gtin, product_name, data_source) select g, 'Bulk', 'claimed' from unnest($1::text[]) g`,
      [gtins],
    )
    await sql('delete from products where gtin = any($1::text[])', [gtins.slice(0, 2)])
    // a statement that fails rolls its delta back with it
    const dup = await sql('insert into products (gtin, product_name, data_source) values ($1, $2, $3), ($1, $2, $3)', [
      uniqueGtin().padStart(14, '0'),
      'Twice',
      'claimed',
    ]).catch((e: unknown) => e)
    expect(dup).toBeInstanceOf(Error)
    const now = await counts()
    expect(now.kept).toBe(now.counted)
    const { total, counted } = await listedAndCounted()
    expect(total).toBe(counted)
    // past the last page there are no rows to carry the total: it is read alone
    const res = await get(`${PRODUCTS}?page=2147483647&page_size=100`, org.key)
    expect(res.json.data).toEqual([])
    expect(res.json.pagination.total_count).toBeGreaterThanOrEqual(counted)
  })

  test('its rows are folded as statements add them, and the sum stays exact', async () => {
    for (let i = 0; i < 70; i++)
      await sql(`insert into products (gtin, product_name, data_source) values ($1, 'One by one', 'claimed')`, [
        uniqueGtin().padStart(14, '0'),
      ])
    const [{ rows }] = (await sql<{ rows: string }>('select count(*) as rows from product_count_deltas')) as [
      { rows: string },
    ]
    expect(Number(rows)).toBeLessThan(70) // 70 statements, at least one fold
    const now = await counts()
    expect(now.kept).toBe(now.counted)
    const { total, counted } = await listedAndCounted()
    expect(total).toBe(counted)
    expect(await listed(`organization_id=${(await owner).id}`)).toBe(12) // filtered lists still count their rows
  })
})
