import { expect, test } from 'bun:test'
import { sql, unique, uniqueGtin } from '../../support/fixtures'
import { ownDatabase } from '../../support/own-database'

// A product's owner_id and recalled_by name organizations without foreign keys (migration 0038:
// checked per statement by a trigger, as a feed's millions of products name none). The rules of
// the foreign keys they replaced hold: a missing organization is refused, and deleting (or
// truncating) organizations sets the products' references to them to null.
const organization = async () =>
  (await sql<{ id: string }>('insert into organizations (name) values ($1) returning id', [unique('Ref Org')]))[0]!.id
const product = async (owner: string | null, recalledBy: string | null) =>
  (
    await sql<{ id: string }>(
      `insert into products (gtin, owner_id, recalled_by, recall_reason, recalled_at)
       values ($1, $2::uuid, $3::uuid, case when $3::uuid is null then null else 'Undeclared milk' end,
         case when $3::uuid is null then null else now() end) returning id`,
      [`0${uniqueGtin()}`, owner, recalledBy],
    )
  )[0]!.id
const referencesOf = async (id: string) =>
  (
    await sql<{ owner_id: string | null; recalled_by: string | null; recall_reason: string | null }>(
      'select owner_id, recalled_by, recall_reason from products where id = $1',
      [id],
    )
  )[0]
const code = (err: unknown) => (err as { code?: string }).code

test("deleting an organization sets its products' owner and recaller to null; another's stay", async () => {
  const [gone, kept] = [await organization(), await organization()]
  const owned = await product(gone, gone)
  const recalledOnly = await product(kept, gone)
  const other = await product(kept, kept)
  await sql('delete from organizations where id = $1', [gone])
  expect(await referencesOf(owned)).toEqual({ owner_id: null, recalled_by: null, recall_reason: 'Undeclared milk' })
  expect(await referencesOf(recalledOnly)).toEqual({
    owner_id: kept,
    recalled_by: null,
    recall_reason: 'Undeclared milk',
  })
  expect(await referencesOf(other)).toEqual({ owner_id: kept, recalled_by: kept, recall_reason: 'Undeclared milk' })
})

test('a product naming an organization that does not exist is refused, on insert and on update', async () => {
  const missing = crypto.randomUUID()
  expect(code(await product(missing, null).catch((err) => err))).toBe('23503')
  expect(code(await product(null, missing).catch((err) => err))).toBe('23503')
  const id = await product(null, null)
  const refused = await sql('update products set owner_id = $2::uuid where id = $1', [id, missing]).catch((e) => e)
  expect(code(refused)).toBe('23503')
  expect(await referencesOf(id)).toEqual({ owner_id: null, recalled_by: null, recall_reason: null })
})

// On a database of its own: a TRUNCATE … CASCADE of the shared test database reaches the brands other
// test files' products name, whose trigger refuses it (as it should), so the outcome depended on
// what the lane had written before.
test('TRUNCATE of organizations keeps the products, owned by nobody', async () => {
  const own = ownDatabase('org_truncate')
  await own.create()
  const client = await own.migrated()
  try {
    const { rows: orgs } = await client.query<{ id: string }>(
      "insert into organizations (name) values ('Truncated Org') returning id",
    )
    const org = orgs[0]!.id
    const { rows: made } = await client.query<{ id: string }>(
      `insert into products (gtin, owner_id, recalled_by, recall_reason, recalled_at)
       values ($1, $2::uuid, $2::uuid, 'Undeclared milk', now()) returning id`,
      [`0${uniqueGtin()}`, org],
    )
    await client.query('truncate organizations cascade')
    const { rows } = await client.query('select owner_id, recalled_by from products where id = $1', [made[0]!.id])
    expect(rows).toEqual([{ owner_id: null, recalled_by: null }])
  } finally {
    await client.end()
    await own.drop()
  }
}, 60_000)
