import { and, eq, ilike, or, type Placeholder, type SQL, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { prepared } from '../db/prepared'
import { retailers } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { refreshSearchDocuments } from '../search'
import { AppError, invalidField, notFound } from '../shared/errors'
import { hasValidCheckDigit } from '../shared/gs1'
import { toShortId } from '../shared/ids'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { likeSubstring, type PageQuery, paginate } from '../shared/pagination'

type RetailerRow = typeof retailers.$inferSelect

export const toRetailerResource = (row: RetailerRow) => ({
  id: toShortId(row.id),
  name: row.name,
  created: row.created.toISOString(),
  metadata: row.metadata,
  is_online: row.isOnline,
  is_physical: row.isPhysical,
  website: row.website,
  gln: row.gln,
  is_canonical: row.isCanonical,
  organization_id: toShortId(row.organizationId),
  marketplace_regions: row.marketplaceRegions,
  category: row.category,
  is_active: row.isActive,
})

export type RetailerInput = {
  name?: string
  metadata?: Metadata | null
  is_online?: boolean
  is_physical?: boolean
  website?: string
  gln?: string
  is_canonical?: boolean
  marketplace_regions?: string[]
  category?: string
  is_active?: boolean
}

type Param = string | Placeholder

/** The caller sees its own retailers and the canonical (shared) directory. */
const visibleTo = (organizationId: Param) =>
  or(eq(retailers.organizationId, organizationId), eq(retailers.isCanonical, true))!

/** The ids of the retailers the caller sees, as a subquery: what else of a retailer it sees (offers) follows it. */
export const visibleRetailerIds = (organizationId: string) =>
  db.select({ id: retailers.id }).from(retailers).where(visibleTo(organizationId))

/** Whether the organization sees the retailer: one of its own, or of the canonical directory. */
export async function isVisibleRetailer(ex: Executor, organizationId: string, retailerId: string) {
  const [row] = await ex
    .select({ id: retailers.id })
    .from(retailers)
    .where(and(eq(retailers.id, retailerId), visibleTo(organizationId)))
  return row !== undefined
}

export type RetailerFilter = { organization_id?: string; search?: string }

/** The list's filter; values or placeholders, so one builder serves the prepared statements too. */
export function listWhere(caller: Param, organizationId?: Param, pattern?: Param) {
  const conditions: SQL[] = [visibleTo(caller)]
  if (organizationId !== undefined) conditions.push(eq(retailers.organizationId, organizationId))
  if (pattern !== undefined) conditions.push(ilike(retailers.name, pattern))
  return and(...conditions)
}

/** The list's SQL (also the benchmark's database floor). */
export const listSelect = (where: SQL | undefined) =>
  db
    .select({ retailer: retailers, total_count: sql<number>`count(*) over ()` })
    .from(retailers)
    .where(where)
    .orderBy(sql`lower(${retailers.name})`, retailers.id)

const listStatement = (byOrg: boolean, bySearch: boolean) =>
  prepared(`retailers_list_${Number(byOrg)}${Number(bySearch)}`, (name) =>
    listSelect(
      listWhere(
        sql.placeholder('caller'),
        byOrg ? sql.placeholder('org') : undefined,
        bySearch ? sql.placeholder('pattern') : undefined,
      ),
    )
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(name),
  )

export function listRetailers(callerOrg: string, filter: RetailerFilter, page: PageQuery) {
  const pattern = filter.search ? likeSubstring(filter.search) : undefined
  const statement = listStatement(filter.organization_id !== undefined, pattern !== undefined)
  return paginate(
    page,
    (limit, offset) => statement.execute({ caller: callerOrg, org: filter.organization_id, pattern, limit, offset }),
    async () => (await db.$count(retailers, listWhere(callerOrg, filter.organization_id, pattern))) as number,
    (r) => toRetailerResource(r.retailer),
  )
}

export async function getRetailer(callerOrg: string, id: string) {
  const [row] = await db
    .select()
    .from(retailers)
    .where(and(eq(retailers.id, id), visibleTo(callerOrg)))
  if (!row) throw notFound('retailer')
  return toRetailerResource(row)
}

function checkGln(gln: string | undefined) {
  if (gln && !hasValidCheckDigit(gln)) throw invalidField('gln', 'has a wrong GS1 check digit')
}

function checkCanonical(input: RetailerInput, admin: boolean) {
  if (input.is_canonical !== undefined && !admin)
    throw new AppError('forbidden', 'is_canonical can be set only with the X-Admin-Token header')
}

const emitRetailer = (tx: Tx, eventType: 'retailer.created' | 'retailer.updated', row: RetailerRow) =>
  emit(tx, { eventType, organizationId: row.organizationId, subjectId: row.id, data: toRetailerResource(row) })

export function createRetailer(
  ex: Executor,
  organizationId: string,
  input: RetailerInput & { name: string },
  admin: boolean,
) {
  checkGln(input.gln)
  checkCanonical(input, admin)
  return inTransaction(ex, async (tx) => {
    const [row] = await tx
      .insert(retailers)
      .values({
        organizationId,
        name: input.name,
        metadata: mergeMetadata({}, input.metadata),
        isOnline: input.is_online,
        isPhysical: input.is_physical,
        website: input.website,
        gln: input.gln,
        isCanonical: input.is_canonical,
        marketplaceRegions: input.marketplace_regions,
        category: input.category,
        isActive: input.is_active,
      })
      .returning()
    await refreshSearchDocuments(tx, 'retailer', [row!.id])
    await emitRetailer(tx, 'retailer.created', row!)
    return toRetailerResource(row!)
  })
}

export function updateRetailer(ex: Executor, organizationId: string, id: string, patch: RetailerInput, admin: boolean) {
  checkGln(patch.gln)
  checkCanonical(patch, admin)
  return inTransaction(ex, async (tx) => {
    const [row] = await tx
      .select()
      .from(retailers)
      .where(and(eq(retailers.id, id), eq(retailers.organizationId, organizationId)))
      .for('update')
    if (!row) {
      // a canonical retailer is readable by everyone, so its existence is no secret: say why (403)
      const [shared] = await tx
        .select({ id: retailers.id })
        .from(retailers)
        .where(and(eq(retailers.id, id), visibleTo(organizationId)))
      if (shared)
        throw new AppError('forbidden', 'a canonical retailer can be changed only by the organization that owns it')
      throw notFound('retailer')
    }
    const metadata = mergeMetadata(row.metadata, patch.metadata)
    const given = {
      name: patch.name,
      metadata,
      isOnline: patch.is_online,
      isPhysical: patch.is_physical,
      website: patch.website,
      gln: patch.gln,
      isCanonical: patch.is_canonical,
      marketplaceRegions: patch.marketplace_regions,
      category: patch.category,
      isActive: patch.is_active,
    }
    const changes = Object.fromEntries(
      Object.entries(given).filter(
        ([column, value]) =>
          value !== undefined && JSON.stringify(value) !== JSON.stringify(row[column as keyof typeof row]),
      ),
    )
    // a patch that changes nothing writes nothing and emits nothing
    if (Object.keys(changes).length === 0) return toRetailerResource(row)
    const [updated] = await tx.update(retailers).set(changes).where(eq(retailers.id, id)).returning()
    await refreshSearchDocuments(tx, 'retailer', [id])
    await emitRetailer(tx, 'retailer.updated', updated!)
    return toRetailerResource(updated!)
  })
}
