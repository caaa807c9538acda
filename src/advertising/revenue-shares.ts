import { and, desc, eq, type SQL, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { revenueShares, type ShareStatus } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { decimalString } from '../shared/decimal'
import { AppError, invalidField, notFound } from '../shared/errors'
import { parseId, toShortId } from '../shared/ids'
import { logger } from '../shared/logger'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { type PageQuery, paginate } from '../shared/pagination'
import { isCalendarDate } from './campaigns'
import { revenueShareQueue } from './queues'

type ShareRow = typeof revenueShares.$inferSelect

/** The moves a share's status may make; any other is 409. */
export const SHARE_MOVES: Record<ShareStatus, ShareStatus[]> = {
  CALCULATED: ['APPROVED', 'DISPUTED'],
  APPROVED: ['PAID', 'DISPUTED'],
  PAID: ['DISPUTED'],
  DISPUTED: [],
}

export const toShareResource = (row: ShareRow) => ({
  id: toShortId(row.id),
  organization_id: toShortId(row.organizationId),
  retailer_id: toShortId(row.retailerId),
  period_start: row.periodStart,
  period_end: row.periodEnd,
  gross_revenue: decimalString(row.grossRevenue),
  platform_fee: decimalString(row.platformFee),
  retailer_share: decimalString(row.retailerShare),
  platform_fee_rate: decimalString(row.platformFeeRate),
  status: row.status,
  metadata: row.metadata,
  paid_at: row.paidAt?.toISOString() ?? null,
  payment_transfer_id: row.paymentTransferId,
  calculated_at: row.calculatedAt.toISOString(),
  created: row.created.toISOString(),
  modified: row.modified.toISOString(),
})

const day = (date: Date) => date.toISOString().slice(0, 10)

/** The first and last day of a calendar month `YYYY-MM`, in UTC whatever the server's zone. */
export function periodBounds(period: string) {
  const [year, month] = period.split('-').map(Number) as [number, number]
  const start = new Date(0)
  start.setUTCFullYear(year, month - 1, 1)
  const end = new Date(0)
  end.setUTCFullYear(year, month, 0)
  return { start: day(start), end: day(end) }
}

/** The calendar month (UTC) before the one `now` falls in: what the monthly schedule settles. */
export function previousPeriod(now: Date): string {
  const first = new Date(0)
  first.setUTCFullYear(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)
  return first.toISOString().slice(0, 7)
}

type Figures = { retailer_id: string; organization_id: string; gross: string; fee: string }
export type ShareFailure = { retailer_id: string; reason: string }

/**
 * Why a retailer's write failed, as the job's output and the CLI show it: the SQLSTATE of a
 * database error, never its message (drizzle's quotes the statement and its values).
 */
const writeFailure = (err: unknown) => {
  const e = err as { code?: unknown; cause?: { code?: unknown } }
  const code = [e?.code, e?.cause?.code].find((c) => typeof c === 'string' && /^[0-9A-Z]{5}$/.test(c))
  return `the share could not be written (${code ? `database error ${code}` : 'see the log'})`
}

/**
 * Each retailer's figures for the month: gross = the month's spend of campaigns on the retailer
 * (performance dates are UTC days), rounded half-even to cents; fee = gross × rate, rounded
 * half-even to cents. Summed in `numeric` without precision, and the share's columns are the
 * same (migration 0021): however many campaigns a retailer has, no sum overflows.
 */
async function monthFigures(ex: Executor, start: string, end: string, rate: string) {
  const result = await ex.execute<Figures>(sql`
    with spend as (
      select c.retailer_id, sum(p.spend) as total
      from campaign_performance p join campaigns c on c.id = p.campaign_id
      where p.date between ${start}::date and ${end}::date
      group by c.retailer_id
    ), gross as (
      select r.organization_id, s.retailer_id, ratio_half_even(s.total, 1, 2) as gross
      from spend s join retailers r on r.id = s.retailer_id
    )
    select retailer_id, organization_id, gross::text as gross,
           ratio_half_even(gross * ${rate}::numeric, 1, 2)::text as fee
    from gross order by retailer_id`)
  return result.rows
}

/** Writes one retailer's share (new, or a CALCULATED one whose figures changed); null when nothing changed. */
async function writeShare(tx: Tx, f: Figures, start: string, end: string, rate: string) {
  const written = await tx.execute<{ id: string }>(sql`
    insert into revenue_shares (organization_id, retailer_id, period_start, period_end, gross_revenue,
                                platform_fee, retailer_share, platform_fee_rate)
    values (${f.organization_id}, ${f.retailer_id}, ${start}::date, ${end}::date, ${f.gross}::numeric,
            ${f.fee}::numeric, ${f.gross}::numeric - ${f.fee}::numeric, ${rate}::numeric)
    on conflict (retailer_id, period_start) do update
      set organization_id = excluded.organization_id, gross_revenue = excluded.gross_revenue,
          platform_fee = excluded.platform_fee, retailer_share = excluded.retailer_share,
          platform_fee_rate = excluded.platform_fee_rate, calculated_at = now(), modified = now()
      where revenue_shares.status = 'CALCULATED'
        and (revenue_shares.gross_revenue, revenue_shares.platform_fee_rate)
            is distinct from (excluded.gross_revenue, excluded.platform_fee_rate)
    returning id`)
  const id = written.rows[0]?.id
  if (!id) return null
  const [row] = await tx.select().from(revenueShares).where(eq(revenueShares.id, id))
  await emit(tx, {
    eventType: 'revenue_share.calculated',
    organizationId: row!.organizationId,
    subjectId: row!.id,
    data: toShareResource(row!),
  })
  return toShareResource(row!)
}

/** `work` apart from the other retailers': a transaction of its own, or a savepoint of the caller's. */
const apart = <T>(ex: Executor, work: (tx: Tx) => Promise<T>): Promise<T> =>
  (ex as { transaction: (w: (tx: Tx) => Promise<T>) => Promise<T> }).transaction(work)

/**
 * Computes every retailer's share of one month (see `monthFigures`); share = gross − fee, so the
 * two sum to gross exactly. Each retailer is written apart from the others (its own transaction,
 * or a savepoint when `ex` is a transaction): a retailer whose write fails is listed in `failures`
 * (and logged), and the others' shares are written all the same. A share already APPROVED, PAID
 * or DISPUTED keeps its figures; a CALCULATED one is updated when the figures changed. New or
 * changed shares emit `revenue_share.calculated` and are returned in `shares`.
 */
export async function calculateRevenueShares(ex: Executor, period: string, rate = config.PLATFORM_FEE_RATE) {
  const { start, end } = periodBounds(period)
  const shares: ReturnType<typeof toShareResource>[] = []
  const failures: ShareFailure[] = []
  for (const figures of await monthFigures(ex, start, end, rate)) {
    const retailer_id = toShortId(figures.retailer_id)
    try {
      const share = await apart(ex, (tx) => writeShare(tx, figures, start, end, rate))
      if (share) shares.push(share)
    } catch (err) {
      failures.push({ retailer_id, reason: writeFailure(err) })
      logger.error({ period, retailer_id, err }, "a retailer's revenue share was not calculated; the others were")
    }
  }
  return { period, shares, failures }
}

/** Queues the calculation of a month (the admin endpoint); the job runs `calculateRevenueShares`. */
export async function requestCalculation(ex: Executor, period: string, rate?: string) {
  const { start, end } = periodBounds(period)
  const jobId = await revenueShareQueue.send(ex, { period, platformFeeRate: rate })
  return {
    period,
    period_start: start,
    period_end: end,
    platform_fee_rate: decimalString(rate ?? config.PLATFORM_FEE_RATE),
    job_id: jobId!,
  }
}

/** The platform's own organization, when configured: it sees every retailer's shares. */
export const platformOrganization = () =>
  config.PLATFORM_ORGANIZATION_ID ? parseId(config.PLATFORM_ORGANIZATION_ID) : null

/** Which shares the path's organization sees: its own as a retailer, or all of them as the platform. */
const visibleTo = (organizationId: string): SQL | undefined =>
  organizationId === platformOrganization() ? undefined : eq(revenueShares.organizationId, organizationId)

export type ShareFilter = { status?: ShareStatus; period_start?: string; retailer_id?: string }

export function listShares(organizationId: string, filter: ShareFilter, page: PageQuery) {
  if (filter.period_start !== undefined && !isCalendarDate(filter.period_start))
    throw invalidField('period_start', 'is not a calendar date of the years 0001-9999')
  const where = and(
    visibleTo(organizationId),
    filter.status ? eq(revenueShares.status, filter.status) : undefined,
    filter.period_start ? eq(revenueShares.periodStart, filter.period_start) : undefined,
    filter.retailer_id ? eq(revenueShares.retailerId, filter.retailer_id) : undefined,
  )
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({ share: revenueShares, total_count: sql<number>`count(*) over ()` })
        .from(revenueShares)
        .where(where)
        .orderBy(desc(revenueShares.periodStart), revenueShares.retailerId)
        .limit(limit)
        .offset(offset),
    async () => (await db.$count(revenueShares, where)) as number,
    (r) => toShareResource(r.share),
  )
}

async function findShare(ex: Executor, organizationId: string, id: string, lock = false) {
  const query = ex
    .select()
    .from(revenueShares)
    .where(and(eq(revenueShares.id, id), visibleTo(organizationId)))
  const [row] = lock ? await query.for('update') : await query
  if (!row) throw notFound('revenue share')
  return row
}

export async function getShare(organizationId: string, id: string) {
  return toShareResource(await findShare(db, organizationId, id))
}

export type SharePatch = { status?: ShareStatus; payment_transfer_id?: string; metadata?: Metadata | null }

function checkMove(row: ShareRow, patch: SharePatch) {
  const to = patch.status
  if (to !== undefined && to !== row.status && !SHARE_MOVES[row.status].includes(to)) {
    const allowed = SHARE_MOVES[row.status].join(', ') || 'none'
    throw new AppError('conflict', `a revenue share cannot go from ${row.status} to ${to}; allowed: ${allowed}`, [
      { field: 'status', message: `allowed next states from ${row.status}: ${allowed}` },
    ])
  }
  const paying = to === 'PAID' && row.status !== 'PAID'
  if (paying && !patch.payment_transfer_id)
    throw invalidField('payment_transfer_id', "is required to mark a share PAID (the payment processor's transfer id)")
  const transfer = patch.payment_transfer_id
  if (transfer !== undefined && !paying) {
    if (row.status !== 'PAID')
      throw invalidField('payment_transfer_id', 'is recorded with the move to PAID (send it with "status": "PAID")')
    if (transfer !== row.paymentTransferId)
      throw new AppError('conflict', 'the share is paid: its payment_transfer_id cannot change', [
        { field: 'payment_transfer_id', message: `the share was paid with ${row.paymentTransferId}` },
      ])
  }
  return paying
}

/** The platform pays: a key (even the platform organization's) approves or pays nothing (contract §4). */
function checkActor(row: ShareRow, organizationId: string, patch: SharePatch, admin: boolean) {
  if (admin) return
  if (row.organizationId !== organizationId)
    throw new AppError(
      'forbidden',
      "the platform organization's keys read every retailer's shares; only the retailer's organization or the X-Admin-Token header changes one",
    )
  if ((patch.status === 'APPROVED' || patch.status === 'PAID') && patch.status !== row.status)
    throw new AppError(
      'forbidden',
      `only the platform (the X-Admin-Token header) moves a revenue share to ${patch.status}`,
      [{ field: 'status', message: "a retailer's manager may set DISPUTED and metadata" }],
    )
}

/**
 * Moves a share's status (409 for a move not in SHARE_MOVES), records the payment with the move
 * to PAID, merges metadata. The same status again is no move (200, unchanged). Only `admin` (the
 * X-Admin-Token header) moves a share to APPROVED or PAID; a key changes only its own
 * organization's shares (403 otherwise).
 */
export function updateShare(ex: Executor, organizationId: string, id: string, patch: SharePatch, admin: boolean) {
  return inTransaction(ex, async (tx: Tx) => {
    const row = await findShare(tx, organizationId, id, true)
    checkActor(row, organizationId, patch, admin)
    const paying = checkMove(row, patch)
    const metadata = mergeMetadata(row.metadata, patch.metadata)
    const moving = patch.status !== undefined && patch.status !== row.status
    if (!moving && JSON.stringify(metadata) === JSON.stringify(row.metadata)) return toShareResource(row)
    const [updated] = await tx
      .update(revenueShares)
      .set({
        status: moving ? patch.status : undefined,
        paidAt: paying ? new Date() : undefined,
        paymentTransferId: paying ? patch.payment_transfer_id : undefined,
        metadata,
        modified: new Date(),
      })
      .where(eq(revenueShares.id, id))
      .returning()
    return toShareResource(updated!)
  })
}
