import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import pg from 'pg'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  eventually,
  expectProblem,
  ORGS,
  PRODUCTS,
  sql,
  type TestOrg,
  tableCounts,
  unique,
} from '../../support/fixtures'
import { databaseUrl, del, get, patch, post } from '../../support/server'
import { createRule } from '../resolver/support'

// Issue 44, finding 3: organization B claimed a GTIN under A's registered GS1 company prefix, added
// a rule, and every scan of it went to B's phishing URL, while A's own claim got 409. A company
// prefix now belongs to one organization: others can neither create nor claim GTINs under it,
// nobody registers it (or an overlapping one) twice, claims made before it was registered are
// disputed (the resolver withholds their links), and the prefix's holder takes them over.

/** A fresh 7-digit company prefix outside the 40x range the other tests' GTINs use. */
function uniquePrefix(): string {
  return `5${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`
}

let item = Math.floor(Math.random() * 50_000)
/** A GTIN-13 under the prefix, with its check digit. */
function gtinUnder(prefix: string): string {
  const body = `${prefix}${String(item++ % 100_000).padStart(12 - prefix.length, '0')}`
  let sum = 0
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += Number(body[i]) * w
  return body + ((10 - (sum % 10)) % 10)
}

const PHISHING = 'https://phish.example/login'
const FOREIGN = /under a GS1 company prefix registered to another organization/

async function productRow(gtin13: string) {
  const [row] = await sql<{ id: string; owner_id: string | null; claim_verification_status: string | null }>(
    'select id, owner_id, claim_verification_status from products where gtin = $1',
    [`0${gtin13}`],
  )
  return row ?? null
}

/** The detail names the reason, never the other organization. */
function expectForeignPrefix(res: { status: number; headers: Headers; json: any; text: string }, holder: TestOrg) {
  expectProblem(res, 409, 'conflict')
  expect(res.json.detail).toMatch(FOREIGN)
  expect(res.text).not.toContain(holder.id)
}

describe('a GS1 company prefix belongs to one organization', () => {
  test('another organization cannot create or claim a GTIN under it (409 conflict); nothing is stored', async () => {
    const prefix = uniquePrefix()
    const [holder, squatter] = await Promise.all([
      createOrganization({ gs1_company_prefixes: [prefix] }),
      createOrganization(),
    ])
    const fresh = gtinUnder(prefix)
    const before = await tableCounts()
    const created = await post(PRODUCTS, { gtin: fresh, product_name: 'Squatted' }, squatter.key)
    expectForeignPrefix(created, holder)
    expect(await productRow(fresh)).toBeNull()
    expect(await tableCounts()).toEqual(before)

    // an unclaimed product under the prefix (its holder created and released it): still not B's to claim
    const released = gtinUnder(prefix)
    expect((await post(PRODUCTS, { gtin: released, product_name: 'Released' }, holder.key)).status).toBe(201)
    expect((await del(`${PRODUCTS}/${released}`, holder.key)).status).toBe(200)
    const stored = await productRow(released)
    const counts = await tableCounts()
    const claimed = await post(`${PRODUCTS}/${released}/claim`, {}, squatter.key)
    expectForeignPrefix(claimed, holder)
    expect(await productRow(released)).toEqual(stored)
    expect(await tableCounts()).toEqual(counts)

    // the holder itself creates and claims under its prefix as before
    expect((await post(`${PRODUCTS}/${released}/claim`, {}, holder.key)).status).toBe(200)
    expect((await post(PRODUCTS, { gtin: fresh, product_name: 'Genuine' }, holder.key)).status).toBe(201)
  })

  test('registering a prefix another organization holds, or one overlapping it, is 409 and writes nothing', async () => {
    const prefix = uniquePrefix()
    const holder = await createOrganization({ gs1_company_prefixes: [prefix] })
    const before = await tableCounts()
    for (const taken of [prefix, `${prefix}12`, prefix.slice(0, 6)]) {
      const res = await post(
        ORGS,
        { name: unique('Org'), owner_email: `${unique('o')}@example.test`, gs1_company_prefixes: [taken] },
        undefined,
        ADMIN,
      )
      expectProblem(res, 409, 'conflict')
      expect(res.json.detail).toContain(taken)
      expect(res.json.detail).toContain('registered to another organization')
      expect(res.text).not.toContain(holder.id)
    }
    expect(await tableCounts()).toEqual(before)
    expect(
      await sql('select organization_id from gs1_company_prefixes where prefix like $1', [`${prefix.slice(0, 6)}%`]),
    ).toEqual([{ organization_id: parseId(holder.id) }])
  })

  test('a claim made before the prefix was registered is disputed, its links withheld, and the holder takes it over', async () => {
    const prefix = uniquePrefix()
    const squatter = await createOrganization()
    const gtin = gtinUnder(prefix)
    // before the prefix is registered, B may claim the GTIN and point its scans anywhere
    const made = await post(PRODUCTS, { gtin, product_name: 'Brand product' }, squatter.key)
    expect(made.status).toBe(201)
    const rule = await createRule(squatter, { scope_type: 'PRODUCT', product_id: made.json.id, custom_url: PHISHING })
    expect((await get(`/01/${gtin}`)).headers.get('location')).toBe(PHISHING)

    // the prefix's holder arrives: B's claim is disputed at once, and scans stop going to B's URL
    const holder = await createOrganization({ gs1_company_prefixes: [prefix] })
    expect((await productRow(gtin))!.claim_verification_status).toBe('disputed')
    const withheld = await eventually(async () => {
      const res = await get(`/01/${gtin}`)
      return res.status === 307 ? null : res
    })
    expectProblem(withheld, 404, 'not_found')
    expect(withheld.json.detail).toContain('disputed')
    expect(withheld.headers.get('location')).toBeNull()
    expectProblem(await get(`/01/${gtin}?linkType=linkset`), 404, 'not_found')
    const explained = await get(`/01/${gtin}?explain=1`)
    expect(explained.json.outcome).toEqual({ status: 404, reason: withheld.json.detail })
    // B's rule is kept as it was (B's data), and B cannot claim the GTIN again
    const [storedRule] = await sql<{ custom_url: string; enabled: boolean }>(
      'select custom_url, enabled from resolution_rules where id = $1',
      [parseId(rule.id)],
    )
    expect(storedRule).toEqual({ custom_url: PHISHING, enabled: true })
    expectForeignPrefix(await post(`${PRODUCTS}/${gtin}/claim`, {}, squatter.key), holder)
    // nor write the record with an owner's authority while the claim is disputed
    const record = await get(`${PRODUCTS}/${gtin}`, squatter.key)
    const edited = await patch(`${PRODUCTS}/${gtin}`, { image_url: 'https://phish.example/pack.png' }, squatter.key)
    expectProblem(edited, 409, 'conflict')
    expect(edited.json.detail).toContain('disputed')
    expect((await get(`${PRODUCTS}/${gtin}`, squatter.key)).json).toEqual(record.json)

    // the holder's claim takes the product over (not 409 as before); B's rules no longer apply
    const taken = await post(`${PRODUCTS}/${gtin}/claim`, {}, holder.key)
    expect(taken.status).toBe(200)
    expect(taken.json.owner_id).toBe(holder.id)
    // and the squatter's owner values no longer decide the record: they stay in provenance only
    expect(taken.json.product_name).toBe('')
    const afterTakeover = (await get(`${PRODUCTS}/${gtin}`, holder.key)).json
    expect(afterTakeover.product_name).toBe('')
    const [names] = await sql<{ product_name: string }>('select product_name from products where gtin = $1', [
      gtin.padStart(14, '0'),
    ])
    expect(names!.product_name).toBe('')
    expect(
      await eventually(async () => {
        const status = (await productRow(gtin))!.claim_verification_status
        return status === 'prefix_matched' ? status : null
      }),
    ).toBe('prefix_matched')
    const scan = await eventually(async () => {
      const res = await get(`/01/${gtin}`)
      return res.json?.detail?.includes('disputed') ? null : res
    })
    expectProblem(scan, 404, 'not_found') // the holder has no rule yet; B's is not its
    expect(scan.headers.get('location')).toBeNull()
    const events = await sql<{ event_type: string; organization_id: string }>(
      'select event_type, organization_id from events where subject_id = $1 order by created, event_type',
      [parseId(made.json.id)],
    )
    expect(events.map((e): unknown[] => [e.event_type, e.organization_id])).toEqual([
      ['product.created', parseId(squatter.id)],
      ['product.updated', parseId(squatter.id)], // disputed
      ['product.claimed', parseId(holder.id)],
      ['product.unclaimed', parseId(squatter.id)],
      ['product.updated', parseId(holder.id)], // the squatter's values gone
      ['product.updated', parseId(holder.id)], // prefix_matched
    ])
    // and the holder's own rules apply again
    await createRule(holder, { scope_type: 'PRODUCT', product_id: made.json.id, custom_url: 'https://brand.example/' })
    const resolved = await eventually(async () => {
      const res = await get(`/01/${gtin}`)
      return res.status === 307 ? res : null
    })
    expect(resolved.headers.get('location')).toBe('https://brand.example/')
  }, 30_000)

  test('a product whose claim is rejected resolves to nothing either', async () => {
    const org = await createOrganization()
    const prefix = uniquePrefix()
    const gtin = gtinUnder(prefix)
    const made = await post(PRODUCTS, { gtin }, org.key)
    await createRule(org, { scope_type: 'ORGANIZATION', custom_url: 'https://org.example/' })
    expect((await get(`/01/${gtin}`)).status).toBe(307)
    // no route rejects a claim yet (a review would): the status is written as a review would leave it
    await sql(`update products set claim_verification_status = 'rejected' where gtin = $1`, [`0${gtin}`])
    await sql(`select pg_notify('resolver_index', 'product:' || $1)`, [`0${gtin}`])
    const res = await eventually(async () => {
      const scan = await get(`/01/${gtin}`)
      return scan.status === 307 ? null : scan
    })
    expectProblem(res, 404, 'not_found')
    expect(res.json.detail).toContain('rejected')
    expect(made.status).toBe(201)
    expect(
      await sql('select count(*)::int n from resolution_rules where organization_id = $1', [parseId(org.id)]),
    ).toEqual([{ n: 1 }])
  }, 30_000)

  test('migration 0022 records the prefixes registered before it and disputes the claims made under them', async () => {
    const prefix = uniquePrefix()
    const squatter = await createOrganization()
    const gtin = gtinUnder(prefix)
    expect((await post(PRODUCTS, { gtin }, squatter.key)).status).toBe(201)
    // before the migration a prefix lived only in the organization's list: written so here
    const holder = await createOrganization()
    await sql('update organizations set gs1_company_prefixes = $2 where id = $1', [parseId(holder.id), [prefix]])
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      await client.query('begin')
      const file = join(import.meta.dir, '../../../src/db/migrations/0022_prefix_ownership.sql')
      for (const statement of (await Bun.file(file).text()).split('--> statement-breakpoint'))
        await client.query(statement)
      const held = await client.query('select organization_id from gs1_company_prefixes where prefix = $1', [prefix])
      expect(held.rows).toEqual([{ organization_id: parseId(holder.id) }])
      const product = await client.query('select owner_id, claim_verification_status from products where gtin = $1', [
        `0${gtin}`,
      ])
      expect(product.rows).toEqual([{ owner_id: parseId(squatter.id), claim_verification_status: 'disputed' }])
    } finally {
      await client.query('rollback')
      await client.end()
    }
    expect((await productRow(gtin))!.claim_verification_status).toBe('unverified')
  })
})
