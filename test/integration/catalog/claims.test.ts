import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  createKey,
  createOrganization,
  eventually,
  expectProblem,
  PRODUCT_FIELDS,
  PRODUCTS,
  sql,
  tableCounts,
  uniqueGtin,
} from '../../support/fixtures'
import { call, del, get, post } from '../../support/server'

describe('claim and unclaim (spec #3)', () => {
  test('unclaim keeps the product: is_claimed false, owner and status null; claim again by another org', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const gtin = uniqueGtin()
    const created = (await post(PRODUCTS, { gtin, product_name: 'Jam', brand: 'Jammy' }, a.key)).json
    const un = await call('DELETE', `${PRODUCTS}/${gtin}`, { key: a.key, body: { organization_id: a.id } })
    expect(un.status).toBe(200)
    expect(Object.keys(un.json).sort()).toEqual(PRODUCT_FIELDS)
    expect(un.json).toMatchObject({
      id: created.id,
      gtin: `0${gtin}`,
      product_name: 'Jam',
      brand: 'Jammy',
      is_claimed: false,
      owner_id: null,
      claim_verification_status: null,
    })
    expect((await get(`${PRODUCTS}/${gtin}`, b.key)).json.is_claimed).toBe(false)

    const claimed = await post(`${PRODUCTS}/${gtin}/claim`, {}, b.key)
    expect(claimed.status).toBe(200)
    expect(claimed.json).toMatchObject({
      is_claimed: true,
      owner_id: b.id,
      claim_verification_status: 'unverified',
      brand: 'Jammy',
    })
    const again = await call('POST', `${PRODUCTS}/${gtin}/claim`, { key: b.key }) // no body at all
    expect(again.status).toBe(200) // idempotent
    expect(again.json).toEqual(claimed.json)
    const events = await sql<{ event_type: string }>(
      'select event_type from events where subject_id = $1 order by created, id',
      [parseId(created.id)],
    )
    expect(events.map((e) => e.event_type)).toEqual(['product.created', 'product.unclaimed', 'product.claimed'])
  })

  test('claim of a GTIN another organization holds is 409 already_claimed; claim of an unknown GTIN 404', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const gtin = uniqueGtin()
    await post(PRODUCTS, { gtin }, a.key)
    const before = await tableCounts()
    expectProblem(await post(`${PRODUCTS}/${gtin}/claim`, {}, b.key), 409, 'already_claimed')
    expectProblem(await post(`${PRODUCTS}/${uniqueGtin()}/claim`, {}, b.key), 404, 'not_found')
    expect(await tableCounts()).toEqual(before)
  })

  test('claim under a GS1 company prefix of the organization is prefix_matched', async () => {
    const gtin = uniqueGtin()
    const a = await createOrganization()
    await post(PRODUCTS, { gtin }, a.key)
    await del(`${PRODUCTS}/${gtin}`, a.key)
    // registered once a has released the GTIN (a prefix belongs to one organization: issue 44), and
    // of 12 digits, so that it holds no other test's GTINs
    const b = await createOrganization({ gs1_company_prefixes: [gtin.slice(0, 12)] })
    expect((await post(`${PRODUCTS}/${gtin}/claim`, {}, b.key)).json.claim_verification_status).toBe('unverified')
    // the prefix signal follows as a job
    expect(
      await eventually(async () => {
        const status = (await get(`${PRODUCTS}/${gtin}`, b.key)).json.claim_verification_status
        return status === 'prefix_matched' ? status : null
      }),
    ).toBe('prefix_matched')
  })

  test('only the owner can unclaim (403); body organization_id of another org is 403; readonly 403', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const gtin = uniqueGtin()
    await post(PRODUCTS, { gtin }, a.key)
    const ro = await createKey(a, 'readonly')
    const before = await tableCounts()
    expectProblem(await del(`${PRODUCTS}/${gtin}`, b.key), 403, 'forbidden')
    expectProblem(
      await call('DELETE', `${PRODUCTS}/${gtin}`, { key: a.key, body: { organization_id: b.id } }),
      403,
      'forbidden',
    )
    expectProblem(
      await call('DELETE', `${PRODUCTS}/${gtin}`, { key: a.key, body: { organization_id: 'short' } }),
      422,
      'validation_error',
    )
    expectProblem(await del(`${PRODUCTS}/${gtin}`, ro), 403, 'forbidden')
    expect(await tableCounts()).toEqual(before)
    expect((await get(`${PRODUCTS}/${gtin}`, a.key)).json.is_claimed).toBe(true)
  })
})
