import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, eventually, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { baseUrl, get, post } from '../../support/server'
import { ADS, createCampaign, createRetailer, rowsPath } from './support'

// Issue 46: a performance row a campaign cannot have (more clicks than impressions, a day outside
// the campaign's start and end dates) is refused: 422 naming the row and field on the JSON
// endpoint, a rejected row with its reason in an import; nothing of it is stored.

let org: TestOrg
let retailer: string
beforeAll(async () => {
  org = await createOrganization()
  retailer = await createRetailer(org)
})

const stored = async (campaignId: string) =>
  sql<{ date: string; clicks: number }>(
    'select date::text, clicks::int from campaign_performance where campaign_id = $1 order by date',
    [parseId(campaignId)],
  )

const row = (date: string, impressions: number, clicks: number) => ({ date, impressions, clicks, spend: '1.00' })

describe('performance rows a campaign cannot have', () => {
  test('JSON: clicks above impressions is 422 naming the row and clicks; nothing written', async () => {
    const campaign = await createCampaign(org, retailer)
    const res = await post(rowsPath(campaign.id), [row('2026-03-01', 10, 5), row('2026-03-02', 10, 11)], org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors).toEqual([{ field: '[1].clicks', message: expect.stringContaining('must not exceed') }])
    expect(await stored(campaign.id)).toEqual([])
  })

  test("JSON: a day before start_date or after end_date is 422 naming the row's date; nothing written", async () => {
    const campaign = await createCampaign(org, retailer, { start_date: '2026-03-01', end_date: '2026-03-31' })
    for (const [date, index] of [
      ['2026-02-28', 1],
      ['2026-04-01', 1],
    ] as const) {
      const res = await post(rowsPath(campaign.id), [row('2026-03-15', 10, 1), row(date, 10, 1)], org.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe(`[${index}].date`)
      expect(res.json.errors[0].message).toContain(date)
    }
    expect(await stored(campaign.id)).toEqual([])
    // the window's own ends are inside it
    const ok = await post(rowsPath(campaign.id), [row('2026-03-01', 10, 10), row('2026-03-31', 10, 0)], org.key)
    expect(ok.status).toBe(200)
    expect(await stored(campaign.id)).toEqual([
      { date: '2026-03-01', clicks: 10 },
      { date: '2026-03-31', clicks: 0 },
    ])
  })

  test('import: such rows are rejected with the reason, the others written', async () => {
    const campaign = await createCampaign(org, retailer, { start_date: '2026-03-01', end_date: '2026-03-31' })
    const csv = [
      'campaign_id,date,impressions,clicks,spend',
      `${campaign.id},2026-03-10,100,5,1`,
      `${campaign.id},2026-03-11,5,6,1`,
      `${campaign.id},2026-02-01,100,5,1`,
      `${campaign.id},2026-04-01,100,5,1`,
    ].join('\n')
    const res = await fetch(`${baseUrl}${ADS}/performance/imports`, {
      method: 'POST',
      headers: { 'x-api-key': org.key, 'content-type': 'text/csv' },
      body: csv,
    })
    expect(res.status).toBe(202)
    const id = ((await res.json()) as { id: string }).id
    const done = await eventually(async () => {
      const r = await get(`${ADS}/performance/imports/${id}`, org.key)
      return r.json.status === 'succeeded' || r.json.status === 'failed' ? r.json : null
    })
    expect(done).toMatchObject({ status: 'succeeded', counts: { created: 1, rejected: 3 } })
    expect(done.errors.map((e: { row: number; reason: string }) => [e.row, e.reason.split(':')[0]])).toEqual([
      [2, 'clicks'],
      [3, 'date'],
      [4, 'date'],
    ])
    expect(await stored(campaign.id)).toEqual([{ date: '2026-03-10', clicks: 5 }])
  })
})
