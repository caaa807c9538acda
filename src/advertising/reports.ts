import { and, asc, eq, type SQL, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { prepared } from '../db/prepared'
import { campaigns, campaignTotals } from '../db/schema'
import { decimalString } from '../shared/decimal'
import { notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { reportCache } from './report-cache'

/**
 * A ratio as a decimal string, computed by PostgreSQL in `numeric`: `ratio_half_even` (migration
 * 0015) divides exactly and rounds half-even to `scale` decimals, 0 for a zero divisor;
 * trailing zeros are dropped ("0.5", "0").
 */
const ratio = (n: SQL, d: SQL, scale: number) => sql<string>`trim_scale(ratio_half_even(${n}, ${d}, ${scale}))::text`

const impressions = sql`coalesce(${campaignTotals.impressions}, 0)`
const clicks = sql`coalesce(${campaignTotals.clicks}, 0)`
const spend = sql`coalesce(${campaignTotals.spend}, 0)`

/** A campaign's lifetime figures, read from its totals row (kept in step with its performance rows). */
export const FIGURES = {
  impressions: sql<string>`${impressions}::text`,
  clicks: sql<string>`${clicks}::text`,
  spend: sql<string>`${spend}::text`,
  ctr: ratio(clicks, impressions, 6),
  effective_cpc: ratio(spend, clicks, 4),
  effective_cpm: ratio(sql`${spend} * 1000`, impressions, 4),
}

type FigureRow = { impressions: string; clicks: string; spend: string; ctr: string }

export const toTotals = (row: FigureRow & { effective_cpc: string; effective_cpm: string }) => ({
  impressions: Number(row.impressions),
  clicks: Number(row.clicks),
  spend: decimalString(row.spend),
  ctr: row.ctr,
  effective_cpc: row.effective_cpc,
  effective_cpm: row.effective_cpm,
})

const { effective_cpc, effective_cpm, ...LIST_FIGURES } = FIGURES

const withTotals = <F extends Partial<typeof FIGURES>>(figures: F) =>
  db
    .select({ id: campaigns.id, name: campaigns.name, status: campaigns.status, ...figures })
    .from(campaigns)
    .leftJoin(campaignTotals, eq(campaignTotals.campaignId, campaigns.id))

const summaryStatement = () =>
  prepared('campaign_summary', (name) =>
    withTotals(FIGURES)
      .where(
        and(eq(campaigns.id, sql.placeholder('id')), eq(campaigns.organizationId, sql.placeholder('organization'))),
      )
      .prepare(name),
  )

const listStatement = () =>
  prepared('campaign_list', (name) =>
    withTotals(LIST_FIGURES)
      .where(eq(campaigns.organizationId, sql.placeholder('organization')))
      .orderBy(asc(campaigns.created), asc(campaigns.id))
      .prepare(name),
  )

const json = (body: string) => new Response(body, { headers: { 'content-type': 'application/json' } })

/** Spec #6 as the route answers it: the summary's JSON, from the report cache when it holds it. */
export const campaignSummaryResponse = async (organizationId: string, campaignId: string) =>
  json(
    await reportCache.body(organizationId, `summary:${campaignId}`, () => campaignSummary(organizationId, campaignId)),
  )

/** Spec #9 as the route answers it: the list's JSON, from the report cache when it holds it. */
export const campaignListResponse = async (organizationId: string) =>
  json(await reportCache.body(organizationId, 'list', () => campaignList(organizationId)))

/** Spec #6: a campaign of the caller's organization with its lifetime totals (others are 404). */
export async function campaignSummary(organizationId: string, campaignId: string) {
  const [row] = await summaryStatement().execute({ id: campaignId, organization: organizationId })
  if (!row) throw notFound('campaign')
  return { campaign_id: toShortId(row.id), campaign_name: row.name, status: row.status, totals: toTotals(row) }
}

/** Spec #9: every campaign of the organization with its totals, oldest first; not paginated. */
export async function campaignList(organizationId: string) {
  const rows = await listStatement().execute({ organization: organizationId })
  return {
    organization_id: toShortId(organizationId),
    campaigns: rows.map((row) => ({
      campaign_id: toShortId(row.id),
      name: row.name,
      status: row.status,
      impressions: Number(row.impressions),
      clicks: Number(row.clicks),
      spend: decimalString(row.spend),
      ctr: row.ctr,
    })),
  }
}
