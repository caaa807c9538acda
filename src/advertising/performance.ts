import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { arrayParam, unnestRows } from '../db/params'
import { campaigns, campaignTotals } from '../db/schema'
import type { Tx } from '../db/tx'
import { AppError, invalidField } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { findCampaign, isCalendarDate } from './campaigns'
import { reportsChanged } from './report-cache'
import { FIGURES, toTotals } from './reports'

/** One day of one campaign from one source. */
export type PerformanceInput = {
  campaignId: string
  date: string
  source: string
  impressions: number
  clicks: number
  spend: string
}

export type WriteCounts = { created: number; updated: number; unchanged: number }

/**
 * What a campaign's lifetime totals may reach, so every sum that reads them fits: spend its
 * `numeric(20,6)` column (14 whole digits), impressions and clicks integers that JSON carries
 * exactly (the reports answer them as numbers). A row is at most these on its own (the schemas).
 */
export const MAX_TOTAL_SPEND = '99999999999999.999999'
const MAX_SPEND_MICROS = 10n ** 20n - 1n
const MAX_COUNT = BigInt(Number.MAX_SAFE_INTEGER)

/** A non-negative decimal string of at most 6 decimals (what the schemas and numeric(20,6) hold) in micro-dollars. */
const micros = (amount: string) => {
  const [whole = '0', fraction = ''] = amount.split('.')
  return BigInt(whole || '0') * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6) || '0')
}

type Sums = { impressions: bigint; clicks: bigint; spend: bigint }
const sumsOf = (r: { impressions: number | string; clicks: number | string; spend: string }): Sums => ({
  impressions: BigInt(r.impressions),
  clicks: BigInt(r.clicks),
  spend: micros(r.spend),
})
const keyOf = (r: { campaignId: string; date: string; source: string }) => `${r.campaignId}|${r.date}|${r.source}`

/**
 * Which rows the campaigns' lifetime totals can take (rows of campaigns the caller has locked,
 * keys unique). In row order, a row counts by what it adds to its campaign's totals (its figures
 * minus those of the row it replaces); a row that would take a total past its bound is refused
 * and counts for nothing, so the outcome does not depend on how rows are cut into chunks.
 * Returns the refused rows' indexes with the reason; the common case (the totals far from their
 * bounds) costs one read of the totals.
 */
export async function refusedByTotals(tx: Tx, rows: PerformanceInput[]) {
  const refused = new Map<number, { field: keyof Sums; reason: string }>()
  if (rows.length === 0) return refused
  const ids = [...new Set(rows.map((r) => r.campaignId))]
  const stored = await tx
    .select({
      id: campaignTotals.campaignId,
      impressions: sql<string>`${campaignTotals.impressions}::text`,
      clicks: sql<string>`${campaignTotals.clicks}::text`,
      spend: sql<string>`${campaignTotals.spend}::text`,
    })
    .from(campaignTotals)
    .where(inArray(campaignTotals.campaignId, ids))
  const totals = new Map<string, Sums>(ids.map((id) => [id, { impressions: 0n, clicks: 0n, spend: 0n }]))
  for (const t of stored) totals.set(t.id, sumsOf(t))
  // the most the rows could add (a replaced row only lowers it): within bounds, all are taken
  const most = new Map(totals)
  for (const r of rows) {
    const t = most.get(r.campaignId)!
    const add = sumsOf(r)
    most.set(r.campaignId, {
      impressions: t.impressions + add.impressions,
      clicks: t.clicks + add.clicks,
      spend: t.spend + add.spend,
    })
  }
  const within = (t: Sums) => t.impressions <= MAX_COUNT && t.clicks <= MAX_COUNT && t.spend <= MAX_SPEND_MICROS
  if ([...most.values()].every(within)) return refused

  const before = await tx.execute<
    { campaign_id: string; date: string; source: string } & Record<keyof Sums, string>
  >(sql`
    select p.campaign_id, p.date::text as date, p.source, p.impressions::text as impressions,
           p.clicks::text as clicks, p.spend::text as spend
    from campaign_performance p
    join ${unnestRows(rows, 'k', {
      campaign_id: ['uuid', (r) => r.campaignId],
      date: ['date', (r) => r.date],
      source: ['text', (r) => r.source],
    })} on (p.campaign_id, p.date, p.source) = (k.campaign_id, k.date, k.source)`)
  const replaced = new Map(
    before.rows.map((b) => [keyOf({ campaignId: b.campaign_id, date: b.date, source: b.source }), sumsOf(b)]),
  )
  rows.forEach((r, i) => {
    const t = totals.get(r.campaignId)!
    const add = sumsOf(r)
    const old = replaced.get(keyOf(r)) ?? { impressions: 0n, clicks: 0n, spend: 0n }
    const next = {
      impressions: t.impressions + add.impressions - old.impressions,
      clicks: t.clicks + add.clicks - old.clicks,
      spend: t.spend + add.spend - old.spend,
    }
    if (within(next)) totals.set(r.campaignId, next)
    else {
      const field = next.spend > MAX_SPEND_MICROS ? 'spend' : next.impressions > MAX_COUNT ? 'impressions' : 'clicks'
      const bound = field === 'spend' ? `${MAX_TOTAL_SPEND} USD` : String(Number.MAX_SAFE_INTEGER)
      refused.set(i, { field, reason: `the campaign's lifetime ${field} would pass ${bound}` })
    }
  })
  return refused
}

/** The default source of rows that name none, for the JSON endpoint. */
export const API_SOURCE = 'api'

/** What a row is checked against: the campaign's status and its window (null: open on that side). */
export type LockedCampaign = { status: string; startDate: string | null; endDate: string | null }

/**
 * Locks the organization's campaigns among `ids` (in id order, so concurrent writers cannot
 * deadlock) and returns their statuses and windows; ids of other organizations are simply absent.
 * Holding the lock serialises writers of a campaign, so its totals are recomputed from committed rows.
 */
export async function lockCampaigns(tx: Tx, organizationId: string, ids: string[]) {
  if (ids.length === 0) return new Map<string, LockedCampaign>()
  const rows = await tx
    .select({ id: campaigns.id, status: campaigns.status, startDate: campaigns.startDate, endDate: campaigns.endDate })
    .from(campaigns)
    .where(and(eq(campaigns.organizationId, organizationId), inArray(campaigns.id, ids)))
    .orderBy(asc(campaigns.id))
    .for('no key update')
  return new Map<string, LockedCampaign>(rows.map(({ id, ...campaign }) => [id, campaign]))
}

/**
 * A row a campaign cannot have (issue 46): more clicks than impressions (a click follows an
 * impression), or a day outside the campaign's start and end dates (both inclusive). The field
 * and the reason, or null. Dates are ISO `YYYY-MM-DD`, so text order is date order.
 */
export function rowRuleProblem(row: PerformanceInput, campaign: LockedCampaign) {
  if (row.clicks > row.impressions)
    return { field: 'clicks', reason: `clicks (${row.clicks}) must not exceed impressions (${row.impressions})` }
  if (campaign.startDate !== null && row.date < campaign.startDate)
    return { field: 'date', reason: `${row.date} is before the campaign's start_date ${campaign.startDate}` }
  if (campaign.endDate !== null && row.date > campaign.endDate)
    return { field: 'date', reason: `${row.date} is after the campaign's end_date ${campaign.endDate}` }
  return null
}

/**
 * Upserts rows of campaigns the caller has locked (one statement; keys must be unique): a row
 * whose figures are unchanged is not rewritten. Then recomputes the totals of the campaigns
 * whose rows changed. Returns how many rows were created, updated and left unchanged.
 */
export async function upsertPerformance(tx: Tx, rows: PerformanceInput[]): Promise<WriteCounts> {
  if (rows.length === 0) return { created: 0, updated: 0, unchanged: 0 }
  const result = await tx.execute<{ created: number; updated: number; changed: string[] | null }>(sql`
    with written as (
      insert into campaign_performance (campaign_id, date, source, impressions, clicks, spend)
      select campaign_id, date, source, impressions, clicks, spend from ${unnestRows(rows, 'r', {
        campaign_id: ['uuid', (r) => r.campaignId],
        date: ['date', (r) => r.date],
        source: ['text', (r) => r.source],
        impressions: ['int8', (r) => r.impressions],
        clicks: ['int8', (r) => r.clicks],
        spend: ['numeric', (r) => r.spend],
      })}
      on conflict (campaign_id, date, source) do update
        set impressions = excluded.impressions, clicks = excluded.clicks, spend = excluded.spend, modified = now()
        where (campaign_performance.impressions, campaign_performance.clicks, campaign_performance.spend)
          is distinct from (excluded.impressions, excluded.clicks, excluded.spend)
      returning campaign_id, (xmax = 0) as inserted)
    select count(*) filter (where inserted)::int as created, count(*) filter (where not inserted)::int as updated,
           array_agg(distinct campaign_id) as changed
    from written`)
  const { created, updated, changed } = result.rows[0]!
  if (changed?.length) await recomputeTotals(tx, changed)
  return { created, updated, unchanged: rows.length - created - updated }
}

/** Sets the campaigns' totals to the sums of their rows (exact: bigint and numeric sums). */
async function recomputeTotals(tx: Tx, ids: string[]) {
  await tx.execute(sql`
    insert into campaign_totals (campaign_id, impressions, clicks, spend)
    select campaign_id, sum(impressions), sum(clicks), sum(spend)
    from campaign_performance where campaign_id = any(${arrayParam(ids, 'uuid')}) group by campaign_id
    on conflict (campaign_id) do update
      set impressions = excluded.impressions, clicks = excluded.clicks, spend = excluded.spend`)
}

export const archivedProblem = () =>
  new AppError('conflict', 'the campaign is archived: its performance can no longer change', [
    { field: 'campaign_id', message: 'the campaign is archived' },
  ])

type RowBody = { date: string; impressions: number; clicks: number; spend: string; source?: string }

/**
 * The JSON endpoint: up to 1,000 daily rows of one campaign of the organization, written in the
 * caller's transaction. 404 for another organization's campaign, 409 for an archived one, 422
 * (naming the first bad row and field, nothing written) for a date that does not exist, a (date,
 * source) given twice, more clicks than impressions or a date outside the campaign's window.
 */
export async function recordPerformance(tx: Tx, organizationId: string, campaignId: string, body: RowBody[]) {
  const seen = new Map<string, number>()
  const rows = body.map((row, i): PerformanceInput => {
    if (!isCalendarDate(row.date)) throw invalidField(`[${i}].date`, 'is not a calendar date')
    const source = row.source ?? API_SOURCE
    const key = `${row.date}|${source}`
    const first = seen.get(key)
    if (first !== undefined)
      throw invalidField(`[${i}].date`, `repeats row ${first} (same date and source); send each day once`)
    seen.set(key, i)
    return { campaignId, date: row.date, source, impressions: row.impressions, clicks: row.clicks, spend: row.spend }
  })
  const campaign = await findCampaign(tx, organizationId, campaignId)
  const locked = (await lockCampaigns(tx, organizationId, [campaign.id])).get(campaign.id)!
  if (locked.status === 'archived') throw archivedProblem()
  rows.forEach((row, i) => {
    const problem = rowRuleProblem(row, locked)
    if (problem) throw invalidField(`[${i}].${problem.field}`, `${problem.reason}; nothing was written`)
  })
  const [refused] = await refusedByTotals(tx, rows)
  if (refused) throw invalidField(`[${refused[0]}].${refused[1].field}`, `${refused[1].reason}; nothing was written`)
  const counts = await upsertPerformance(tx, rows)
  if (counts.created + counts.updated > 0) await reportsChanged(tx, organizationId)
  const [totals] = await tx
    .select(FIGURES)
    .from(campaigns)
    .leftJoin(campaignTotals, eq(campaignTotals.campaignId, campaigns.id))
    .where(eq(campaigns.id, campaign.id))
  return { campaign_id: toShortId(campaign.id), received: rows.length, counts, totals: toTotals(totals!) }
}
