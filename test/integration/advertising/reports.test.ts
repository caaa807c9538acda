import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createKey, createOrganization, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { get, patch, post } from '../../support/server'
import { ADS, createCampaign, createRetailer, listPath, rowsPath, summary, summaryPath } from './support'

const SPEC_DECIMAL = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/

let org: TestOrg
let other: TestOrg
let retailer: string
beforeAll(async () => {
  ;[org, other] = await Promise.all([createOrganization(), createOrganization()])
  retailer = await createRetailer(org)
})

/** `n` consecutive UTC days from `start`. */
const days = (start: string, n: number) =>
  Array.from({ length: n }, (_, i) =>
    new Date(Date.parse(`${start}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10),
  )

const storedRows = async (campaignId: string) =>
  (
    await sql<{ n: number }>('select count(*)::int n from campaign_performance where campaign_id = $1', [
      parseId(campaignId),
    ])
  )[0]!.n

describe('campaign summary (spec #6): totals and ratios, exact', () => {
  test('no rows yet: zero totals, and every ratio "0" (a zero divisor is not an error)', async () => {
    const campaign = await createCampaign(org, retailer)
    expect(await summary(org, campaign.id)).toEqual({
      campaign_id: campaign.id,
      campaign_name: campaign.name,
      status: 'draft',
      totals: { impressions: 0, clicks: 0, spend: '0.00', ctr: '0', effective_cpc: '0', effective_cpm: '0' },
    })
  })

  test('impressions without clicks: ctr and effective_cpc "0", effective_cpm computed', async () => {
    const campaign = await createCampaign(org, retailer)
    const res = await post(
      rowsPath(campaign.id),
      [{ date: '2025-01-01', impressions: 4000, clicks: 0, spend: '10' }],
      org.key,
    )
    expect(res.status).toBe(200)
    // 10 × 1000 / 4000 = 2.5
    expect(res.json.totals).toEqual({
      impressions: 4000,
      clicks: 0,
      spend: '10.00',
      ctr: '0',
      effective_cpc: '0',
      effective_cpm: '2.5',
    })
  })

  test('hand-computed ratios: thirds rounded at their scale', async () => {
    const campaign = await createCampaign(org, retailer)
    await post(
      rowsPath(campaign.id),
      [
        { date: '2025-01-01', impressions: 2, clicks: 2, spend: '0.60' },
        { date: '2025-01-02', impressions: 1, clicks: 1, spend: '1.40' },
      ],
      org.key,
    )
    // 3 impressions, 3 clicks, spend 2.00: ctr 1
    // cpc = 2 / 3 = 0.6666… → 0.6667; cpm = 2000 / 3 = 666.6666… → 666.6667
    expect((await summary(org, campaign.id)).totals).toEqual({
      impressions: 3,
      clicks: 3,
      spend: '2.00',
      ctr: '1',
      effective_cpc: '0.6667',
      effective_cpm: '666.6667',
    })
  })

  test('ties round half to even at the stated scales (ctr 6, cpc 4, cpm 4 decimals)', async () => {
    const cases: [
      { impressions: number; clicks: number; spend: string },
      { ctr: string; effective_cpc: string; effective_cpm: string },
    ][] = [
      // 1 / 2,000,000 = 0.0000005 → 0.000000; 0.0001 / 2 = 0.00005 → 0.0000; 0.0001 × 1000 / 2e6 = 0.00000005 → 0
      [
        { impressions: 2_000_000, clicks: 1, spend: '0.0001' },
        { ctr: '0', effective_cpc: '0.0001', effective_cpm: '0' },
      ],
      // 3 / 2,000,000 = 0.0000015 → 0.000002; 0.0003 / 3 = 0.0001
      [
        { impressions: 2_000_000, clicks: 3, spend: '0.0003' },
        { ctr: '0.000002', effective_cpc: '0.0001', effective_cpm: '0' },
      ],
      // ctr 2 / 20 = 0.1; cpc 0.0005 / 2 = 0.00025 → 0.0002 (even); cpm 0.0005 × 1000 / 20 = 0.025
      [
        { impressions: 20, clicks: 2, spend: '0.0005' },
        { ctr: '0.1', effective_cpc: '0.0002', effective_cpm: '0.025' },
      ],
      // cpc: 0.0007 / 2 = 0.00035 → 0.0004 (even); cpm: 0.0007 × 1000 / 2800 = 0.00025 → 0.0002
      [
        { impressions: 2800, clicks: 2, spend: '0.0007' },
        { ctr: '0.000714', effective_cpc: '0.0004', effective_cpm: '0.0002' },
      ],
    ]
    for (const [row, ratios] of cases) {
      const campaign = await createCampaign(org, retailer)
      expect((await post(rowsPath(campaign.id), [{ date: '2025-02-01', ...row }], org.key)).status).toBe(200)
      const { totals } = await summary(org, campaign.id)
      expect({ ctr: totals.ctr, effective_cpc: totals.effective_cpc, effective_cpm: totals.effective_cpm }).toEqual(
        ratios,
      )
    }
  })

  test('a thousand small amounts sum exactly where binary floats drift', async () => {
    const campaign = await createCampaign(org, retailer)
    const dates = days('2022-01-01', 1000)
    const rows = dates.map((date, i) => ({ date, impressions: 7, clicks: 1, spend: i % 2 ? '0.1' : '0.2' }))
    let float = 0
    for (const r of rows) float += Number(r.spend)
    expect(float).not.toBe(150) // 0.1 + 0.2 … in binary drifts
    const res = await post(rowsPath(campaign.id), rows, org.key)
    expect(res.status).toBe(200)
    expect(res.json.counts).toEqual({ created: 1000, updated: 0, unchanged: 0 })
    // 500 × 0.1 + 500 × 0.2 = 150; ctr 1000 / 7000 = 0.142857142… → 0.142857; cpc 0.15; cpm 150000 / 7000 = 21.428571… → 21.4286
    expect(res.json.totals).toEqual({
      impressions: 7000,
      clicks: 1000,
      spend: '150.00',
      ctr: '0.142857',
      effective_cpc: '0.15',
      effective_cpm: '21.4286',
    })
    expect(await summary(org, campaign.id)).toMatchObject({ totals: res.json.totals })
    for (const value of Object.values(res.json.totals))
      if (typeof value === 'string') expect(value).toMatch(SPEC_DECIMAL)
  })

  test('micro-dollar spend is kept exactly and shown with at least two decimals', async () => {
    const campaign = await createCampaign(org, retailer)
    await post(
      rowsPath(campaign.id),
      [
        { date: '2025-03-01', impressions: 1, clicks: 0, spend: '0.000001' },
        { date: '2025-03-02', impressions: 1, clicks: 0, spend: '12345678901234.5' },
      ],
      org.key,
    )
    expect((await summary(org, campaign.id)).totals.spend).toBe('12345678901234.500001')
  })
})

describe('performance rows: idempotent by campaign, date and source', () => {
  test('sent again: unchanged; changed figures replace the day; another source adds to it', async () => {
    const campaign = await createCampaign(org, retailer)
    const rows = [
      { date: '2025-04-01', impressions: 100, clicks: 5, spend: '2.50' },
      { date: '2025-04-02', impressions: 200, clicks: 10, spend: '5.00' },
    ]
    expect((await post(rowsPath(campaign.id), rows, org.key)).json.counts).toEqual({
      created: 2,
      updated: 0,
      unchanged: 0,
    })
    const again = await post(rowsPath(campaign.id), rows, org.key)
    expect(again.json.counts).toEqual({ created: 0, updated: 0, unchanged: 2 })
    expect(again.json.totals).toMatchObject({ impressions: 300, clicks: 15, spend: '7.50' })
    const changed = await post(rowsPath(campaign.id), [{ ...rows[0]!, impressions: 150, spend: '3.00' }], org.key)
    expect(changed.json.counts).toEqual({ created: 0, updated: 1, unchanged: 0 })
    expect(changed.json.totals).toMatchObject({ impressions: 350, clicks: 15, spend: '8.00' })
    const network = await post(rowsPath(campaign.id), [{ ...rows[0]!, source: 'retail-network' }], org.key)
    expect(network.json.counts).toEqual({ created: 1, updated: 0, unchanged: 0 })
    expect(network.json.totals).toMatchObject({ impressions: 450, clicks: 20, spend: '10.50' })
    expect(await storedRows(campaign.id)).toBe(3)
    const [totals] = await sql(
      'select impressions::int, clicks::int, spend::text from campaign_totals where campaign_id = $1',
      [parseId(campaign.id)],
    )
    expect(totals).toEqual({ impressions: 450, clicks: 20, spend: '10.500000' })
  })

  test('bad rows are refused whole (422) and write nothing', async () => {
    const campaign = await createCampaign(org, retailer)
    const good = { date: '2025-05-01', impressions: 1, clicks: 1, spend: '1' }
    const refused: unknown[] = [
      [good, { ...good, spend: 1.5 }],
      [good, { ...good, date: '2025-02-29' }],
      [good, { ...good, impressions: -1 }],
      [good, { ...good, clicks: 1.5 }],
      [good, good],
      [good, { ...good, extra: 1 }],
      [],
      Array.from({ length: 1001 }, (_, i) => ({ ...good, date: days('2020-01-01', 1001)[i] })),
      good,
    ]
    for (const body of refused) {
      const res = await post(rowsPath(campaign.id), body, org.key)
      expectProblem(res, 422, 'validation_error')
    }
    expect(await storedRows(campaign.id)).toBe(0)
  })

  test('an archived campaign refuses rows (409); others may report while active, paused or completed', async () => {
    const campaign = await createCampaign(org, retailer)
    const row = (date: string) => [{ date, impressions: 1, clicks: 0, spend: '0.01' }]
    const steps: [string, number][] = [
      ['active', 200],
      ['paused', 200],
      ['completed', 200],
      ['archived', 409],
    ]
    for (const [i, [status, expected]] of steps.entries()) {
      expect((await patch(`${ADS}/campaigns/${campaign.id}`, { status }, org.key)).status).toBe(200)
      const res = await post(rowsPath(campaign.id), row(`2025-06-0${i + 1}`), org.key)
      expect(res.status).toBe(expected)
    }
    expect(await storedRows(campaign.id)).toBe(3)
  })

  test('tenancy: rows, summary and list of another organization', async () => {
    const campaign = await createCampaign(org, retailer)
    const rows = [{ date: '2025-07-01', impressions: 1, clicks: 1, spend: '1' }]
    expectProblem(await post(rowsPath(campaign.id), rows, other.key), 404, 'not_found')
    expectProblem(await get(summaryPath(campaign.id), other.key), 404, 'not_found')
    expectProblem(await get(listPath(org), other.key), 403, 'forbidden')
    expectProblem(await post(rowsPath(campaign.id), rows, await createKey(org, 'readonly')), 403, 'forbidden')
    expect(await storedRows(campaign.id)).toBe(0)
  })
})

describe('campaign list (spec #9)', () => {
  test('{organization_id, campaigns}: every campaign of the organization with its totals, no pagination', async () => {
    const own = await createOrganization()
    const shop = await createRetailer(own)
    const first = await createCampaign(own, shop)
    const second = await createCampaign(own, shop)
    await createCampaign(other, await createRetailer(other))
    await post(rowsPath(first.id), [{ date: '2025-08-01', impressions: 8, clicks: 1, spend: '0.30' }], own.key)
    const res = await get(listPath(own), (await createKey(own, 'readonly')) as string)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      organization_id: own.id,
      campaigns: [
        {
          campaign_id: first.id,
          name: first.name,
          status: 'draft',
          impressions: 8,
          clicks: 1,
          spend: '0.30',
          ctr: '0.125',
        },
        {
          campaign_id: second.id,
          name: second.name,
          status: 'draft',
          impressions: 0,
          clicks: 0,
          spend: '0.00',
          ctr: '0',
        },
      ],
    })
  })
})
