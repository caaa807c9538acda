import { and, eq } from 'drizzle-orm'
import { type CampaignStatus, campaigns } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { isVisibleRetailer } from '../retailers/retailers'
import { decimalString } from '../shared/decimal'
import { AppError, invalidField, notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { reportsChanged } from './report-cache'

type CampaignRow = typeof campaigns.$inferSelect

/** The moves a campaign's status may make (contract: anything else is 409 naming these). */
export const NEXT_STATUSES: Record<CampaignStatus, CampaignStatus[]> = {
  draft: ['active'],
  active: ['paused', 'completed'],
  paused: ['active', 'completed'],
  completed: ['archived'],
  archived: [],
}

export const toCampaignResource = (row: CampaignRow) => ({
  id: toShortId(row.id),
  organization_id: toShortId(row.organizationId),
  retailer_id: toShortId(row.retailerId),
  name: row.name,
  status: row.status,
  allowed_next_statuses: NEXT_STATUSES[row.status],
  budget: decimalString(row.budget),
  pricing_model: row.pricingModel,
  rate: decimalString(row.rate),
  currency: 'USD' as const,
  start_date: row.startDate,
  end_date: row.endDate,
  metadata: row.metadata,
  created: row.created.toISOString(),
  modified: row.modified.toISOString(),
})

export type CampaignInput = {
  name?: string
  retailer_id?: string
  status?: CampaignStatus
  budget?: string
  pricing_model?: 'CPC' | 'CPM'
  rate?: string
  start_date?: string | null
  end_date?: string | null
  metadata?: Metadata | null
}

/**
 * A calendar date that exists, of the years 0001-9999 (the schema checks the shape; February 30th
 * passes a pattern, and year 0000 is a valid JavaScript date that PostgreSQL's `date` refuses).
 */
export function isCalendarDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`)
  return (
    !Number.isNaN(date.getTime()) &&
    date.getUTCFullYear() >= 1 &&
    date.getUTCFullYear() <= 9999 &&
    date.toISOString().slice(0, 10) === value
  )
}

function checkDates(start: string | null, end: string | null) {
  for (const [field, value] of [
    ['start_date', start],
    ['end_date', end],
  ] as const)
    if (value !== null && !isCalendarDate(value)) throw invalidField(field, 'is not a calendar date')
  if (start !== null && end !== null && end < start) throw invalidField('end_date', 'must not be before start_date')
}

/** The retailer a campaign runs on: one of the organization's own, or of the canonical directory. */
async function checkRetailer(tx: Tx, organizationId: string, retailerId: string) {
  if (!(await isVisibleRetailer(tx, organizationId, retailerId)))
    throw invalidField('retailer_id', 'names no retailer of your organization or of the canonical directory')
}

export function createCampaign(
  ex: Executor,
  organizationId: string,
  input: CampaignInput & {
    name: string
    retailer_id: string
    budget: string
    pricing_model: 'CPC' | 'CPM'
    rate: string
  },
) {
  checkDates(input.start_date ?? null, input.end_date ?? null)
  return inTransaction(ex, async (tx) => {
    await checkRetailer(tx, organizationId, input.retailer_id)
    const [row] = await tx
      .insert(campaigns)
      .values({
        organizationId,
        retailerId: input.retailer_id,
        name: input.name,
        budget: input.budget,
        pricingModel: input.pricing_model,
        rate: input.rate,
        startDate: input.start_date ?? null,
        endDate: input.end_date ?? null,
        metadata: mergeMetadata({}, input.metadata),
      })
      .returning()
    await reportsChanged(tx, organizationId)
    return toCampaignResource(row!)
  })
}

/** The campaign of the organization, or 404 (another organization's campaign does not exist for it). */
export async function findCampaign(ex: Executor, organizationId: string, id: string, lock = false) {
  const query = ex
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.id, id), eq(campaigns.organizationId, organizationId)))
  const [row] = lock ? await query.for('update') : await query
  if (!row) throw notFound('campaign')
  return row
}

export async function getCampaign(ex: Executor, organizationId: string, id: string) {
  return toCampaignResource(await findCampaign(ex, organizationId, id))
}

/** 409 unless `to` is a move the campaign's status may make. */
export function checkTransition(from: CampaignStatus, to: CampaignStatus) {
  const allowed = NEXT_STATUSES[from]
  if (allowed.includes(to)) return
  const next = allowed.length ? allowed.join(', ') : 'none (archived is final)'
  throw new AppError('conflict', `a campaign cannot go from ${from} to ${to}; allowed next states: ${next}`, [
    { field: 'status', message: `allowed next states from ${from}: ${next}` },
  ])
}

export function updateCampaign(ex: Executor, organizationId: string, id: string, patch: CampaignInput) {
  return inTransaction(ex, async (tx) => {
    const row = await findCampaign(tx, organizationId, id, true)
    if (patch.status !== undefined && patch.status !== row.status) checkTransition(row.status, patch.status)
    if (row.status === 'archived' && Object.keys(patch).some((k) => k !== 'status'))
      throw new AppError('conflict', 'an archived campaign cannot be changed')
    if (patch.retailer_id !== undefined && patch.retailer_id !== row.retailerId) {
      if (row.status !== 'draft')
        throw new AppError('conflict', 'the retailer of a campaign can change only while it is a draft', [
          { field: 'retailer_id', message: `the campaign is ${row.status}` },
        ])
      await checkRetailer(tx, organizationId, patch.retailer_id)
    }
    checkDates(
      patch.start_date === undefined ? row.startDate : patch.start_date,
      patch.end_date === undefined ? row.endDate : patch.end_date,
    )
    const [updated] = await tx
      .update(campaigns)
      .set({
        name: patch.name,
        retailerId: patch.retailer_id,
        status: patch.status,
        budget: patch.budget,
        pricingModel: patch.pricing_model,
        rate: patch.rate,
        startDate: patch.start_date,
        endDate: patch.end_date,
        metadata: mergeMetadata(row.metadata, patch.metadata),
        modified: new Date(),
      })
      .where(eq(campaigns.id, id))
      .returning()
    await reportsChanged(tx, organizationId)
    return toCampaignResource(updated!)
  })
}
