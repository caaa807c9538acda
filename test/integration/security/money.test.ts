import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId, toShortId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  eventually,
  expectProblem,
  RETAILERS,
  sql,
  type TestOrg,
  unique,
} from '../../support/fixtures'
import { call, get, patch, post } from '../../support/server'
import {
  ADS,
  campaignsPath,
  createCampaign,
  createRetailer,
  listPath,
  rowsPath,
  sharesPath,
  summaryPath,
} from '../advertising/support'

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
      `select count(*)::int n from pgboss.job where name = 'advertising.calculate-shares'`,
    )
    expectProblem(
      await post(`${ADS}/revenue-share/calculate`, { period: '0000-01' }, undefined, ADMIN),
      422,
      'validation_error',
    )
    expect(
      await sql<{ n: number }>(`select count(*)::int n from pgboss.job where name = 'advertising.calculate-shares'`),
    ).toEqual(jobs)
  })
})

describe('the revenue-share calculation settles each retailer apart', () => {
  const awaitJob = (jobId: string) =>
    eventually(async () => {
      const [j] = await sql<{ state: string; output: any }>('select state, output from pgboss.job where id = $1', [
        jobId,
      ])
      return j && !['created', 'active'].includes(j.state) ? j : null
    }, 60_000)
  const sharesOf = (periodStart: string) =>
    sql<{ retailer_id: string; gross: string; fee: string; share: string }>(
      `select retailer_id, gross_revenue::text gross, platform_fee::text fee, retailer_share::text share
       from revenue_shares where period_start = $1 order by gross_revenue`,
      [periodStart],
    )
  const performanceOf = (start: string, end: string) =>
    sql(`select count(*)::int n, sum(spend)::text total from campaign_performance where date between $1 and $2`, [
      start,
      end,
    ])

  test("another tenant's 10,001 campaigns at the largest spend: the retailer gets its exact share, and the others theirs (was: no share)", async () => {
    const period = '2093-07'
    const shop = await createOrganization()
    const fine = (await post(RETAILERS, { name: unique('Fine'), is_canonical: true }, shop.key, ADMIN)).json.id
    const huge = (await post(RETAILERS, { name: unique('Huge'), is_canonical: true }, shop.key, ADMIN)).json.id
    const tenant = await createOrganization()
    const ok = (await createCampaign(tenant, fine)).id
    expect((await post(rowsPath(ok), [row('2093-07-04', '10.105')], tenant.key)).status).toBe(200)
    // One tenant's 10,001 campaigns on the other retailer, each at the largest spend a campaign
    // holds: a month of more than 10^18 USD, past the numeric(20,2) the shares had. Each campaign is
    // what the API accepts; creating them one request at a time would take minutes, so they are
    // written here as the API writes them.
    const bulk = await sql<{ id: string }>(
      `with made as (
         insert into campaigns (organization_id, retailer_id, name, budget, pricing_model, rate, status)
         select $1::uuid, $2::uuid, 'bulk ' || g, 1, 'CPC', 1, 'active' from generate_series(1, 10001) g
         returning id)
       , rows as (
         insert into campaign_performance (campaign_id, date, source, impressions, clicks, spend)
         select id, '2093-07-05', 'api', 1, 1, 99999999999999.999999 from made returning campaign_id)
       insert into campaign_totals (campaign_id, impressions, clicks, spend)
       select campaign_id, 1, 1, 99999999999999.999999 from rows returning campaign_id id`,
      [uuidOf(tenant.id), uuidOf(huge)],
    )
    const performanceBefore = await performanceOf('2093-07-01', '2093-07-31')
    const res = await post(`${ADS}/revenue-share/calculate`, { period, platform_fee_rate: '0.15' }, undefined, ADMIN)
    expect(res.status).toBe(202)
    const job = await awaitJob(res.json.job_id)
    expect(job.state).toBe('completed')
    expect(job.output.failures).toEqual([])
    // 10,001 × 99999999999999.999999 = 1000099999999999999.989999 → 1000099999999999999.99 (half-even);
    // fee × 0.15 = 150014999999999999.9985 → 150015000000000000.00; share = gross − fee.
    // 10.105 → 10.10 (half-even); fee 1.515 → 1.52; share 8.58
    expect(await sharesOf('2093-07-01')).toEqual([
      { retailer_id: uuidOf(fine), gross: '10.10', fee: '1.52', share: '8.58' },
      {
        retailer_id: uuidOf(huge),
        gross: '1000099999999999999.99',
        fee: '150015000000000000.00',
        share: '850084999999999999.99',
      },
    ])
    // the API answers the shares as decimal strings (its response schema takes them: no 500)
    const listed = await get(`${sharesPath(shop.id)}?period_start=2093-07-01`, shop.key)
    expect(listed.status).toBe(200)
    const byRetailer = Object.fromEntries(
      listed.json.data.map((s: Record<string, string>) => [
        s.retailer_id,
        [s.gross_revenue, s.platform_fee, s.retailer_share],
      ]),
    )
    expect(byRetailer).toEqual({
      [fine]: ['10.10', '1.52', '8.58'],
      [huge]: ['1000099999999999999.99', '150015000000000000.00', '850084999999999999.99'],
    })
    // the reports of the tenant that holds the 10,001 campaigns answer too
    const bulkId = toShortId(bulk[0]!.id)
    const report = await get(summaryPath(bulkId), tenant.key)
    expect(report.status, report.text).toBe(200)
    expect(report.json.totals).toMatchObject({ impressions: 1, clicks: 1, spend: MAX })
    const list = await get(listPath(tenant), tenant.key)
    expect(list.status, list.text).toBe(200)
    expect(list.json.campaigns).toHaveLength(10_002)
    expect(list.json.campaigns.filter((c: { spend: string }) => c.spend === MAX)).toHaveLength(10_001)
    // the performance the shares are computed from is untouched
    expect(await performanceOf('2093-07-01', '2093-07-31')).toEqual(performanceBefore)
  }, 90_000)

  test("one retailer whose share cannot be written does not stop the others' shares, and the reason quotes no SQL", async () => {
    const period = '2093-08'
    const shop = await createOrganization()
    const made = []
    for (const name of ['Blocked', 'Open', 'Also open'])
      made.push((await post(RETAILERS, { name: unique(name), is_canonical: true }, shop.key, ADMIN)).json.id as string)
    const [blocked, open, alsoOpen] = made as [string, string, string]
    const tenant = await createOrganization()
    for (const [i, retailerId] of made.entries()) {
      const campaign = (await createCampaign(tenant, retailerId)).id
      expect((await post(rowsPath(campaign), [row('2093-08-10', `${i + 1}0.00`)], tenant.key)).status).toBe(200)
    }
    // The overflow this once was cannot happen any more: a trigger stands in for any failure of one
    // retailer's write (here with overflow's own SQLSTATE), for this retailer only.
    const fn = `money_test_refuse_${Date.now().toString(36)}`
    await sql(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.retailer_id = '${uuidOf(blocked)}' then
          raise exception 'refused by the test for %', new.retailer_id using errcode = 'numeric_value_out_of_range';
        end if;
        return new;
      end $$`)
    await sql(`create trigger ${fn} before insert or update on revenue_shares for each row execute function ${fn}()`)
    try {
      const performanceBefore = await performanceOf('2093-08-01', '2093-08-31')
      const res = await post(`${ADS}/revenue-share/calculate`, { period, platform_fee_rate: '0.15' }, undefined, ADMIN)
      expect(res.status).toBe(202)
      const job = await awaitJob(res.json.job_id)
      expect(job.state).toBe('completed')
      // SQLSTATE only: a database message quotes the statement and its values
      expect(job.output.failures).toEqual([
        { retailer_id: blocked, reason: 'the share could not be written (database error 22003)' },
      ])
      expect(await sharesOf('2093-08-01')).toEqual([
        { retailer_id: uuidOf(open), gross: '20.00', fee: '3.00', share: '17.00' },
        { retailer_id: uuidOf(alsoOpen), gross: '30.00', fee: '4.50', share: '25.50' },
      ])
      expect(await performanceOf('2093-08-01', '2093-08-31')).toEqual(performanceBefore)
    } finally {
      await sql(`drop trigger ${fn} on revenue_shares`)
      await sql(`drop function ${fn}()`)
    }
  }, 60_000)
})
