import { afterAll, beforeAll, expect, test } from 'bun:test'
import { announcement, reportCache } from '../../../src/advertising/report-cache'
import { parseId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
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

/** A campaign's clicks in a process's list, read unasserted (for polling; clicksIn asserts). */
const readClicks = async (base: string, campaignId: string) => {
  const res = await fetch(`${base}${listPath(org)}`, { headers: { 'x-api-key': org.key } })
  const type = res.headers.get('content-type')
  if (res.status !== 200 || !type?.startsWith('application/json')) return { status: res.status, type }
  const body = (await res.json()) as { campaigns: { campaign_id: string; clicks: number }[] }
  return { status: res.status, type, clicks: body.campaigns.find((c) => c.campaign_id === campaignId)?.clicks }
}
const clicksIn = async (base: string, campaignId: string) => {
  const read = await readClicks(base, campaignId)
  expect(read.status).toBe(200)
  expect(read.type).toStartWith('application/json')
  return read.clicks
}
/** Waits until the other process's list shows `done` (or answers anything but a JSON 200, for clicksIn to fail on). */
const otherShows = (campaignId: string, done: (clicks: number | undefined) => boolean) =>
  eventually(
    async () => {
      const read = await readClicks(other.url, campaignId)
      return (read.status !== 200 || !read.type?.startsWith('application/json') || done(read.clicks)) && read
    },
    20_000,
    'the other process to read the change',
  )
const clicksHere = async (campaignId: string) => (await get(summaryPath(campaignId), org.key)).json.totals.clicks

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
    await otherShows(campaign.id, (c) => c === clicks)
    expect(await clicksIn(other.url, campaign.id)).toBe(clicks)
  }
  // a new campaign shows in the other process's cached list too
  const second = await createCampaign(org, retailer)
  await otherShows(second.id, (c) => c !== undefined)
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
  await eventually(async () => (await clicksHere(campaign.id)) === 7, 20_000, 'the NOTIFY to drop the body')
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(7)
})

test("a process's own announcement, arriving after its commit, does not drop what was read since", async () => {
  const campaign = await createCampaign(org, retailer)
  const row = { date: '2026-03-01', impressions: 10, clicks: 4, spend: '3' }
  expect((await post(rowsPath(campaign.id), [row], org.key)).status).toBe(200)
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(4)
  await sql(`update campaign_totals set clicks = 9 where campaign_id = $1`, [parseId(campaign.id)])
  // the commit's NOTIFY, as it comes back late through this process's listener: the body stands.
  // A second NOTIFY in the same transaction, from "another process" about an organization of no
  // one, follows it: a listener gets a transaction's notifications in the order sent, so once that
  // one has dropped its organization, the late announcement has provably been handled.
  const marker = crypto.randomUUID()
  const unmarked = reportCache.generation(marker)
  await sql(`select pg_notify('advertising_reports', $1), pg_notify('advertising_reports', $2)`, [
    announcement(parseId(org.id)!),
    `${marker}:another-process`,
  ])
  await eventually(() => reportCache.generation(marker) > unmarked, 20_000, 'the listener to handle both NOTIFYs')
  expect((await get(summaryPath(campaign.id), org.key)).json.totals.clicks).toBe(4)
  // another process's announcement drops it
  await sql(`select pg_notify('advertising_reports', $1)`, [`${parseId(org.id)}:another-process`])
  await eventually(async () => (await clicksHere(campaign.id)) === 9, 20_000, 'the NOTIFY to drop the body')
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
