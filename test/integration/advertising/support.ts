import { expect } from 'bun:test'
import { RETAILERS, type TestOrg, unique } from '../../support/fixtures'
import { get, post } from '../../support/server'

export const ADS = '/advertising/api/v1'
export const campaignsPath = (org: TestOrg) => `${ADS}/organizations/${org.id}/campaigns`
export const summaryPath = (id: string) => `${ADS}/reporting/campaigns/${id}/summary`
export const listPath = (org: TestOrg) => `${ADS}/reporting/organizations/${org.id}/campaigns`
export const rowsPath = (id: string) => `${ADS}/campaigns/${id}/performance`
export const sharesPath = (orgId: string) => `${ADS}/revenue-share/${orgId}`

/** A retailer of the organization (201 asserted). */
export async function createRetailer(org: TestOrg, name = unique('Ad Retailer')) {
  const res = await post(RETAILERS, { name }, org.key)
  expect(res.status).toBe(201)
  return res.json.id as string
}

/** A campaign of the organization on the retailer (201 asserted). */
export async function createCampaign(org: TestOrg, retailerId: string, extra: Record<string, unknown> = {}) {
  const res = await post(
    campaignsPath(org),
    {
      name: unique('Campaign'),
      retailer_id: retailerId,
      budget: '1000.00',
      pricing_model: 'CPC',
      rate: '0.25',
      ...extra,
    },
    org.key,
  )
  if (res.status !== 201) throw new Error(`campaign not created: ${res.status} ${res.text}`)
  return res.json
}

export async function summary(org: TestOrg, id: string) {
  const res = await get(summaryPath(id), org.key)
  expect(res.status).toBe(200)
  return res.json
}
