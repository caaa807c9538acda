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

/** The default source of rows that name none, for the JSON endpoint. */
export const API_SOURCE = 'api'

/**
 * Locks the organization's campaigns among `ids` (in id order, so concurrent writers cannot
 * deadlock) and returns their statuses; ids of other organizations are simply absent. Holding
 * the lock serialises writers of a campaign, so its totals are recomputed from committed rows.
 */
export async function lockCampaigns(tx: Tx, organizationId: string, ids: string[]) {
  if (ids.length === 0) return new Map<string, string>()
  const rows = await tx
    .select({ id: campaigns.id, status: campaigns.status })
    .from(campaigns)
    .where(and(eq(campaigns.organizationId, organizationId), inArray(campaigns.id, ids)))
    .orderBy(asc(campaigns.id))
    .for('no key update')
  return new Map(rows.map((r) => [r.id, r.status]))
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
 * for a date that does not exist or a (date, source) given twice.
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
  const statuses = await lockCampaigns(tx, organizationId, [campaign.id])
  if (statuses.get(campaign.id) === 'archived') throw archivedProblem()
  const counts = await upsertPerformance(tx, rows)
  if (counts.created + counts.updated > 0) await reportsChanged(tx, organizationId)
  const [totals] = await tx
    .select(FIGURES)
    .from(campaigns)
    .leftJoin(campaignTotals, eq(campaignTotals.campaignId, campaigns.id))
    .where(eq(campaigns.id, campaign.id))
  return { campaign_id: toShortId(campaign.id), received: rows.length, counts, totals: toTotals(totals!) }
}
