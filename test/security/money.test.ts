import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../src/shared/ids'
import { ADS, campaignsPath, createCampaign, createRetailer, rowsPath, sharesPath } from '../advertising/support'
import {
  ADMIN,
  createOrganization,
  eventually,
  expectProblem,
  RETAILERS,
  sql,
  type TestOrg,
  unique,
} from '../support/fixtures'
import { call, get, patch, post } from '../support/server'

// Issue 44, findings 4 and 7 (money and dates): amounts beyond what the columns and sums hold are
// 422 at the edge (or rejected import rows), dates outside the years 0001-9999 are 422, and the
// monthly revenue-share calculation settles every retailer it can even when one cannot be settled.

const MAX = '99999999999999.999999'
const row = (date: string, spend: string, source?: string) => ({ date, impressions: 1, clicks: 1, spend, source })

let advertiser: TestOrg
let retailer: string

const uuidOf = (shortId: string) => parseId(shortId)!

/** Everything stored about a campaign's performance, to show that a refused write changed nothing. */
const stored = async (campaignId: string) => ({
  rows: await sql(
    `select date::text, source, impressions::text, clicks::text, spend::text
     from campaign_performance where campaign_id = $1 order by 1, 2`,
    [uuidOf(campaignId)],
  ),
  totals: await sql('select impressions::text, clicks::text, spend::text from campaign_totals where campaign_id = $1', [
    uuidOf(campaignId),
  ]),
})

beforeAll(async () => {
  advertiser = await createOrganization()
  retailer = await createRetailer(advertiser)
})

describe('money is bounded where it enters', () => {
  test("a row that would take a campaign's lifetime spend past its column is 422 and writes nothing (was 500)", async () => {
    const campaign = (await createCampaign(advertiser, retailer)).id
    expect((await post(rowsPath(campaign), [row('2031-05-01', '99999999999998.999999')], advertiser.key)).status).toBe(
      200,
    )
    const before = await stored(campaign)
    // one dollar of room left: the second row at the maximum, or one micro-dollar too many
    for (const spend of ['99999999999999.99', '0.500001']) {
      const res = await post(rowsPath(campaign), [row('2031-05-02', '0.50'), row('2031-05-03', spend)], advertiser.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe('[1].spend')
      expect(res.json.errors[0].message).toContain(MAX)
    }
    expect(await stored(campaign)).toEqual(before)
    // a row that replaces one of the campaign's rows counts by its difference: lowering is taken
    const lowered = await post(
      rowsPath(campaign),
      [row('2031-05-01', '1.00'), row('2031-05-02', '2.50')],
      advertiser.key,
    )
    expect(lowered.status).toBe(200)
    expect(lowered.json.totals.spend).toBe('3.50')
  })

  test('1,000 rows at the largest spend in one request: 422, nothing written (was 500)', async () => {
    const campaign = (await createCampaign(advertiser, retailer)).id
    const rows = Array.from({ length: 1000 }, (_, i) => row('2031-06-01', '99999999999999.99', `src-${i}`))
    const res = await post(rowsPath(campaign), rows, advertiser.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe('[1].spend')
    expect(await stored(campaign)).toEqual({ rows: [], totals: [] })
    // the reports still answer, and the campaign's summary is empty
    const summary = await get(`${ADS}/reporting/campaigns/${campaign}/summary`, advertiser.key)
    expect(summary.status).toBe(200)
    expect(summary.json.totals.spend).toBe('0.00')
  })

  test('an import refuses, row by row, what would pass the bounds or the years 0001-9999, and writes the rest', async () => {
    const full = (await createCampaign(advertiser, retailer)).id
    const other = (await createCampaign(advertiser, retailer)).id
    const csv = [
      'campaign_id,date,impressions,clicks,spend',
      `${full},2031-07-01,1,1,${MAX}`,
      `${full},2031-07-02,1,1,0.01`,
      `${other},2031-07-01,10,1,5.00`,
      `${other},0000-01-01,10,1,5.00`,
    ].join('\n')
    const res = await call('POST', `${ADS}/performance/imports`, {
      key: advertiser.key,
      raw: csv,
      headers: { 'content-type': 'text/csv' },
    })
    expect(res.status, res.text).toBe(202)
    const done = await eventually(async () => {
      const got = await get(`${ADS}/performance/imports/${res.json.id}`, advertiser.key)
      return got.json.status === 'succeeded' || got.json.status === 'failed' ? got.json : null
    })
    expect(done.status).toBe('succeeded')
    expect(done.counts).toEqual({ created: 2, updated: 0, unchanged: 0, rejected: 2 })
    expect(done.errors.map((e: { row: number }) => e.row)).toEqual([2, 4])
    expect(done.errors[0].reason).toBe(`the campaign's lifetime spend would pass ${MAX} USD`)
    expect(done.errors[1].reason).toContain('date')
    expect((await stored(full)).totals).toEqual([{ impressions: '1', clicks: '1', spend: MAX }])
    expect((await stored(other)).rows).toEqual([
      { date: '2031-07-01', source: 'import', impressions: '10', clicks: '1', spend: '5.000000' },
    ])
  })
})

describe('dates outside the years 0001-9999 are 422', () => {
  test('campaign dates, performance rows, the period_start filter and the calculated period (were 500)', async () => {
    const campaign = (await createCampaign(advertiser, retailer)).id
    const before = await sql('select count(*)::int n from campaigns where organization_id = $1', [
      uuidOf(advertiser.id),
    ])
    const create = (dates: Record<string, string>) =>
      post(
        campaignsPath(advertiser),
        { name: unique('Dated'), retailer_id: retailer, budget: '10', pricing_model: 'CPC', rate: '0.1', ...dates },
        advertiser.key,
      )
    for (const dates of [{ start_date: '0000-01-01' }, { end_date: '0000-12-31' }] as Record<string, string>[])
      expectProblem(await create(dates), 422, 'validation_error')
    expect(
      await sql('select count(*)::int n from campaigns where organization_id = $1', [uuidOf(advertiser.id)]),
    ).toEqual(before)
    const campaignBefore = await sql('select start_date::text, end_date::text, modified from campaigns where id = $1', [
      uuidOf(campaign),
    ])
    expectProblem(
      await patch(`${ADS}/campaigns/${campaign}`, { start_date: '0000-01-01' }, advertiser.key),
      422,
      'validation_error',
    )
    expect(
      await sql('select start_date::text, end_date::text, modified from campaigns where id = $1', [uuidOf(campaign)]),
    ).toEqual(campaignBefore)
    expectProblem(await post(rowsPath(campaign), [row('0000-01-01', '1.00')], advertiser.key), 422, 'validation_error')
    expect(await stored(campaign)).toEqual({ rows: [], totals: [] })

    for (const day of ['0000-01-01', '2031-02-30'])
      expectProblem(
        await get(`${sharesPath(advertiser.id)}?period_start=${day}`, advertiser.key),
        422,
        'validation_error',
      )
    const jobs = await sql<{ n: number }>(
      `select count(*)::int n from pgboss.job where name = 'advertising.revenue-shares'`,
    )
    expectProblem(
      await post(`${ADS}/revenue-share/calculate`, { period: '0000-01' }, undefined, ADMIN),
      422,
      'validation_error',
    )
    expect(
      await sql<{ n: number }>(`select count(*)::int n from pgboss.job where name = 'advertising.revenue-shares'`),
    ).toEqual(jobs)
  })
})

describe('the revenue-share calculation settles each retailer apart', () => {
  test("one retailer whose month cannot be held does not stop the others' shares (was: the whole job failed)", async () => {
    const period = '2093-07'
    const shop = await createOrganization()
    const fine = (await post(RETAILERS, { name: unique('Fine'), is_canonical: true }, shop.key, ADMIN)).json.id
    const huge = (await post(RETAILERS, { name: unique('Huge'), is_canonical: true }, shop.key, ADMIN)).json.id
    const tenant = await createOrganization()
    const ok = (await createCampaign(tenant, fine)).id
    expect((await post(rowsPath(ok), [row('2093-07-04', '10.105')], tenant.key)).status).toBe(200)
    // One tenant's 10,001 campaigns on the other retailer, each at the largest spend a campaign
    // holds: a month of more than 10^18 USD. Each campaign is what the API accepts; creating them
    // one request at a time would take minutes, so they are written here as the API writes them.
    await sql(
      `with made as (
         insert into campaigns (organization_id, retailer_id, name, budget, pricing_model, rate, status)
         select $1::uuid, $2::uuid, 'bulk ' || g, 1, 'CPC', 1, 'active' from generate_series(1, 10001) g
         returning id)
       , rows as (
         insert into campaign_performance (campaign_id, date, source, impressions, clicks, spend)
         select id, '2093-07-05', 'api', 1, 1, 99999999999999.999999 from made returning campaign_id)
       insert into campaign_totals (campaign_id, impressions, clicks, spend)
       select campaign_id, 1, 1, 99999999999999.999999 from rows`,
      [uuidOf(tenant.id), uuidOf(huge)],
    )
    const performanceBefore = await sql(
      `select count(*)::int n, sum(spend)::text total from campaign_performance where date between '2093-07-01' and '2093-07-31'`,
    )
    const res = await post(`${ADS}/revenue-share/calculate`, { period, platform_fee_rate: '0.15' }, undefined, ADMIN)
    expect(res.status).toBe(202)
    const job = await eventually(async () => {
      const [j] = await sql<{ state: string; output: any }>('select state, output from pgboss.job where id = $1', [
        res.json.job_id,
      ])
      return j && !['created', 'active'].includes(j.state) ? j : null
    }, 60_000)
    expect(job.state).toBe('completed')
    expect(job.output.failures).toEqual([
      { retailer_id: huge, reason: expect.stringContaining('is more than a revenue share holds') },
    ])
    const shares = await sql<{ retailer_id: string; gross: string; fee: string; share: string }>(
      `select retailer_id, gross_revenue::text gross, platform_fee::text fee, retailer_share::text share
       from revenue_shares where period_start = '2093-07-01'`,
    )
    // 10.105 → 10.10 (half-even); fee 1.515 → 1.52; share 8.58
    expect(shares).toEqual([{ retailer_id: uuidOf(fine), gross: '10.10', fee: '1.52', share: '8.58' }])
    expect(
      (await get(sharesPath(shop.id), shop.key)).json.data.map((s: { retailer_id: string }) => s.retailer_id),
    ).toEqual([fine])
    // the performance the shares are computed from is untouched
    expect(
      await sql(
        `select count(*)::int n, sum(spend)::text total from campaign_performance where date between '2093-07-01' and '2093-07-31'`,
      ),
    ).toEqual(performanceBefore)
  }, 90_000)
})
