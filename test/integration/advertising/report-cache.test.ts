import { afterAll, beforeAll, expect, test } from 'bun:test'
import { announcement, reportCache } from '../../../src/advertising/report-cache'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, sql, type TestOrg } from '../../support/fixtures'
import { startServer } from '../../support/process'
import { databaseUrl, get, post } from '../../support/server'
import { createCampaign, createRetailer, listPath, rowsPath, summaryPath } from './support'

// Report bodies are cached per organization; a change drops them in the committing process at once
// and in every other process through NOTIFY.
let org: TestOrg
let retailer: string
let other: Awaited<ReturnType<typeof startServer>>
beforeAll(async () => {
  org = await createOrganization()
  retailer = await createRetailer(org)
  other = await startServer({ DATABASE_URL: databaseUrl, ROLE: 'api', LOG_LEVEL: 'warn' })
})
afterAll(async () => {
  other.kill('SIGTERM')
  await other.exited
})

const clicksIn = async (base: string, campaignId: string) => {
  const res = await fetch(`${base}${listPath(org)}`, { headers: { 'x-api-key': org.key } })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('application/json')
  const body = (await res.json()) as { campaigns: { campaign_id: string; clicks: number }[] }
  return body.campaigns.find((c) => c.campaign_id === campaignId)?.clicks
}

test('a write is read back at once in the process that made it, and within moments in another', async () => {
  const campaign = await createCampaign(org, retailer)
  const row = { date: '2026-01-01', impressions: 100, clicks: 1, spend: '1' }
  expect((await post(rowsPath(campaign.id), [row], org.key)).status).toBe(200)
  // both processes have the body cached now
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(1)
  expect(await clicksIn(other.url, campaign.id)).toBe(1)
  for (let clicks = 2; clicks <= 6; clicks++) {
    expect((await post(rowsPath(campaign.id), [{ ...row, clicks }], org.key)).status).toBe(200)
    expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(clicks)
    expect(
      (await get(listPath(org), org.key)).json.campaigns.find((c: any) => c.campaign_id === campaign.id).clicks,
    ).toBe(clicks)
    const until = Date.now() + 2000
    while ((await clicksIn(other.url, campaign.id)) !== clicks && Date.now() < until) await Bun.sleep(10)
    expect(await clicksIn(other.url, campaign.id)).toBe(clicks)
  }
  // a new campaign shows in the other process's cached list too
  const second = await createCampaign(org, retailer)
  const until = Date.now() + 2000
  while ((await clicksIn(other.url, second.id)) === undefined && Date.now() < until) await Bun.sleep(10)
  expect(await clicksIn(other.url, second.id)).toBe(0)
})

test('bodies come from the cache until a change is announced', async () => {
  const campaign = await createCampaign(org, retailer)
  expect(
    (await post(rowsPath(campaign.id), [{ date: '2026-02-01', impressions: 10, clicks: 2, spend: '3' }], org.key))
      .status,
  ).toBe(200)
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(2)
  // behind the service's back (no announcement), the cached body stands
  await sql(`update campaign_totals set clicks = 7 where campaign_id = $1`, [parseId(campaign.id)])
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(2)
  await sql(`select pg_notify('advertising_reports', $1)`, [parseId(org.id)])
  const until = Date.now() + 2000
  while ((await get(summaryPath(campaign.id), org.key)).json.totals.clicks !== 7 && Date.now() < until)
    await Bun.sleep(10)
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(7)
})

test("a process's own announcement, arriving after its commit, does not drop what was read since", async () => {
  const campaign = await createCampaign(org, retailer)
  const row = { date: '2026-03-01', impressions: 10, clicks: 4, spend: '3' }
  expect((await post(rowsPath(campaign.id), [row], org.key)).status).toBe(200)
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(4)
  await sql(`update campaign_totals set clicks = 9 where campaign_id = $1`, [parseId(campaign.id)])
  // the commit's NOTIFY, as it comes back late through this process's listener: the body stands
  await sql(`select pg_notify('advertising_reports', $1)`, [announcement(parseId(org.id)!)])
  await Bun.sleep(300)
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(4)
  // another process's announcement drops it
  await sql(`select pg_notify('advertising_reports', $1)`, [`${parseId(org.id)}:another-process`])
  const until = Date.now() + 2000
  while ((await get(summaryPath(campaign.id), org.key)).json.totals.clicks !== 9 && Date.now() < until)
    await Bun.sleep(10)
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(9)
})

test('a read that overlapped a change does not store what it read', () => {
  const id = crypto.randomUUID()
  const before = reportCache.generation(id)
  reportCache.store(id, before, 'list', '"first"')
  expect(reportCache.get(id, 'list')).toBe('"first"')
  const started = reportCache.generation(id)
  reportCache.drop(id) // a change commits while the read runs
  reportCache.store(id, started, 'list', '"stale"')
  expect(reportCache.get(id, 'list')).toBeUndefined()
  reportCache.store(id, reportCache.generation(id), 'list', '"fresh"')
  expect(reportCache.get(id, 'list')).toBe('"fresh"')
})
