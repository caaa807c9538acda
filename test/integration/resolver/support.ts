import { expect } from 'bun:test'
import { toShortId } from '../../../src/shared/ids'
import { PRODUCTS, sql, type TestOrg, uniqueGtin } from '../../support/fixtures'
import { post } from '../../support/server'

export const rulesPath = (org: TestOrg) => `/resolver/api/v1/organizations/${org.id}/resolution-rules`

/** A product the organization holds (created through the API, so it is claimed), with its brand. */
export async function ownedProduct(org: TestOrg, brand = 'Resolver Brand') {
  const gtin = uniqueGtin()
  const res = await post(PRODUCTS, { gtin, product_name: 'Resolver test product', brand }, org.key)
  expect(res.status).toBe(201)
  const [row] = await sql<{ brand_id: string }>('select brand_id from products where gtin = $1', [res.json.gtin])
  return { id: res.json.id as string, gtin: res.json.gtin as string, brandId: toShortId(row!.brand_id) }
}

/** Creates a rule and returns it (201 asserted). */
export async function createRule(org: TestOrg, body: Record<string, unknown>) {
  const res = await post(rulesPath(org), body, org.key)
  if (res.status !== 201) throw new Error(`rule not created: ${res.status} ${res.text}`)
  return res.json
}
