import { beforeAll, describe, expect, test } from 'bun:test'
import { type Client, createClient } from 'gtin-catalog'
import { ADMIN, eventually, unique, uniqueGtin } from '../../support/fixtures'
import { baseUrl } from '../../support/server'

// Every spec endpoint (1-12) called through the package's typed client against the real server.
// The field reads below are typed: misspelling one fails the typecheck (see types.test.ts).
let admin: Client
let api: Client
let orgId = ''

beforeAll(async () => {
  admin = createClient(baseUrl, { adminToken: ADMIN['x-admin-token'] })
  const { data, error } = await admin.account.api.v1.organizations.post({
    name: unique('Client Org'),
    owner_email: 'owner@client.test',
    owner_name: 'Ola Owner',
  })
  expect(error).toBeNull()
  orgId = data!.organization.id
  api = createClient(baseUrl, { apiKey: data!.api_key.key! })
})

const account = () => api.account.api.v1.organizations({ organization_id: orgId })

describe('typed client: accounts', () => {
  test('spec #1 create an API key, spec #4 list members', async () => {
    const created = await account()['api-keys'].post({ name: 'reader', role: 'readonly' })
    expect(created.status).toBe(200)
    expect(created.data!.role).toBe('readonly')
    expect(created.data!.key).toMatch(/^gck_/)
    const members = await account().members.get()
    expect(members.status).toBe(200)
    expect(members.data!.data.map((m) => [m.user_email, m.role])).toEqual([['owner@client.test', 'owner']])

    const reader = createClient(baseUrl, { apiKey: created.data!.key! })
    const refused = await reader.account.api.v1.organizations({ organization_id: orgId })['api-keys'].post({
      name: 'nope',
      role: 'manager',
    })
    expect(refused.data).toBeNull()
    expect(refused.error!.status).toBe(403)
    expect(refused.error!.value).toMatchObject({ code: 'forbidden', status: 403 })
  })
})

describe('typed client: catalog', () => {
  test('spec #11 create a product, get it, spec #10 search it, spec #3 unclaim it; problems are typed', async () => {
    const gtin = uniqueGtin()
    const created = await api.products.api.v1.products.post({
      gtin,
      product_name: 'Typed Hazelnut Wafer',
      brand: 'Clientele',
      ingredients_text: 'wheat flour, sugar, hazelnuts',
    })
    expect(created.status).toBe(201)
    expect(created.data!.contains_allergens.sort()).toEqual(['gluten', 'nuts'])
    const gtin14 = created.data!.gtin

    const got = await api.products.api.v1.products({ gtin: gtin14 }).get()
    expect(got.data!.product_name).toBe('Typed Hazelnut Wafer')
    expect(typeof got.data!.created).toBe('string') // ISO strings, not Dates

    const found = await api.catalog.api.v1.search.get({ query: { q: 'typed hazelnut', type: ['product'] } })
    expect(found.status).toBe(200)
    expect(found.data!.results.map((r) => r.name)).toContain('Typed Hazelnut Wafer')

    const duplicate = await api.products.api.v1.products.post({ gtin, product_name: 'Again' })
    expect(duplicate.error!.status).toBe(409)
    expect(duplicate.error!.value).toMatchObject({ code: 'gtin_exists' })

    const unclaimed = await api.products.api.v1.products({ gtin: gtin14 }).delete()
    expect(unclaimed.status).toBe(200)
    expect(unclaimed.data!.is_claimed).toBe(false)

    const missing = await api.products.api.v1.products({ gtin: '0000000000000' }).get()
    expect(missing.error!.status).toBe(422)
    expect(missing.error!.value).toMatchObject({ code: 'invalid_gtin' })
  })

  test('spec #8 a barcode comes back as a file (Blob) with its content type', async () => {
    const svg = await api.products.api.v1.barcode.post({ gtin: '4006381333931', format: 'svg' })
    expect(svg.status).toBe(200)
    expect(svg.data).toBeInstanceOf(Blob)
    expect(await (svg.data as Blob).text()).toStartWith('<svg ')
    expect(svg.response!.headers.get('content-type')).toStartWith('image/svg+xml')
    const png = await api.products.api.v1.barcode.post({ gtin: '4006381333931', format: 'png' })
    const bytes = new Uint8Array(await (png.data as Blob).arrayBuffer())
    expect([...bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47])
    expect(png.response!.headers.get('content-type')).toBe('image/png')
  })

  test('spec #5 list retailers', async () => {
    const name = unique('Client Shop')
    const created = await api.retailers.api.v1.retailers.post({ name })
    expect(created.status).toBe(201)
    const listed = await api.retailers.api.v1.retailers.get({ query: { page_size: 100 } })
    expect(listed.status).toBe(200)
    expect(listed.data!.data.map((r) => r.name)).toContain(name)
  })
})

describe('typed client: resolver and webhooks', () => {
  test('spec #2 list resolution rules', async () => {
    const rules = api.resolver.api.v1.organizations({ organization_id: orgId })['resolution-rules']
    const created = await rules.post({ scope_type: 'ORGANIZATION', custom_url: 'https://client.example/' })
    expect(created.status).toBe(201)
    const listed = await rules.get({ query: { enabled: 'true' } })
    expect(listed.data!.data.map((r) => r.id)).toEqual([created.data!.id])
  })

  test('spec #12 update a webhook endpoint (trailing-slash routes, no redirect)', async () => {
    const endpoints = api.webhooks.api.v1.endpoints
    const created = await endpoints.post({
      url: 'https://93.184.215.14/hooks/client',
      event_types: ['product.created'],
    })
    expect(created.status).toBe(201)
    expect(created.response!.redirected).toBe(false)
    const id = created.data!.id
    const updated = await endpoints({ endpoint_id: id }).patch({ label: 'typed', event_types: ['product.updated'] })
    expect(updated.status).toBe(200)
    expect(updated.response!.redirected).toBe(false)
    expect(updated.data!.event_types).toEqual(['product.updated'])
    expect(updated.data!.label).toBe('typed')
    const listed = await endpoints.get()
    expect(listed.data!.data.map((e) => e.id)).toEqual([id])
  })
})

describe('typed client: advertising', () => {
  test('spec #6 campaign summary, spec #9 campaign list, spec #7 revenue share detail', async () => {
    const retailer = await api.retailers.api.v1.retailers.post({ name: unique('Ad Shop') })
    const campaign = await api.advertising.api.v1.organizations({ organization_id: orgId }).campaigns.post({
      name: 'Typed Campaign',
      retailer_id: retailer.data!.id,
      budget: '500.00',
      pricing_model: 'CPC',
      rate: '0.25',
    })
    expect(campaign.status).toBe(201)
    const campaignId = campaign.data!.id
    const rows = await api.advertising.api.v1.campaigns({ campaign_id: campaignId }).performance.post([
      { date: '2034-05-02', impressions: 1000, clicks: 3, spend: '0.75' },
      { date: '2034-05-31', impressions: 3000, clicks: 0, spend: '0.10' },
    ])
    expect(rows.status).toBe(200)

    const summary = await api.advertising.api.v1.reporting.campaigns({ campaign_id: campaignId }).summary.get()
    expect(summary.data!.totals).toMatchObject({ impressions: 4000, clicks: 3, spend: '0.85', ctr: '0.00075' })
    const list = await api.advertising.api.v1.reporting.organizations({ organization_id: orgId }).campaigns.get()
    expect(list.data!.organization_id).toBe(orgId)
    expect(list.data!.campaigns.map((c) => c.campaign_id)).toEqual([campaignId])

    const calculated = await admin.advertising.api.v1['revenue-share'].calculate.post({
      period: '2034-05',
      platform_fee_rate: '0.2',
    })
    expect(calculated.status).toBe(202)
    const shares = api.advertising.api.v1['revenue-share']({ organization_id: orgId })
    const share = await eventually(async () => (await shares.get()).data?.data[0] ?? null)
    const detail = await api.advertising.api.v1['revenue-share']({ organization_id: orgId })({
      share_id: share.id,
    }).get()
    expect(detail.data).toMatchObject({ gross_revenue: '0.85', platform_fee: '0.17', retailer_share: '0.68' })
  })
})
