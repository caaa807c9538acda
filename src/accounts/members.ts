import { and, eq, ilike, or, type SQL, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { isUniqueViolation } from '../db/errors'
import { members } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { AppError, notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { likeSubstring, type PageQuery, paginate } from '../shared/pagination'
import { type MemberRole, ROLE_DISPLAY } from './roles'

type MemberRow = typeof members.$inferSelect

export const toMemberResource = (row: MemberRow) => ({
  id: toShortId(row.id),
  user_email: row.userEmail,
  user_name: row.userName,
  user_metadata: row.userMetadata,
  role: row.role,
  role_display: ROLE_DISPLAY[row.role],
  created: row.created.toISOString(),
})

export type MemberFilter = { role?: MemberRole; q?: string }

export function listMembers(organizationId: string, filter: MemberFilter, page: PageQuery) {
  const conditions: SQL[] = [eq(members.organizationId, organizationId)]
  if (filter.role) conditions.push(eq(members.role, filter.role))
  if (filter.q) {
    const pattern = likeSubstring(filter.q)
    conditions.push(or(ilike(members.userName, pattern), ilike(members.userEmail, pattern))!)
  }
  const where = and(...conditions)
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({ member: members, total_count: sql<number>`count(*) over ()` })
        .from(members)
        .where(where)
        .orderBy(members.created, members.id)
        .limit(limit)
        .offset(offset),
    async () => (await db.$count(members, where)) as number,
    (r) => toMemberResource(r.member),
  )
}

export type MemberInput = { user_email: string; user_name?: string; user_metadata?: Metadata | null; role: MemberRole }

export async function addMember(ex: Executor, organizationId: string, input: MemberInput) {
  try {
    const [row] = await ex
      .insert(members)
      .values({
        organizationId,
        userEmail: input.user_email,
        userName: input.user_name ?? '',
        userMetadata: mergeMetadata({}, input.user_metadata, 'user_metadata'),
        role: input.role,
      })
      .returning()
    return toMemberResource(row!)
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', `${input.user_email} is already a member`)
    throw err
  }
}

const otherOwners = (tx: Tx, organizationId: string, id: string) =>
  tx.$count(
    members,
    and(eq(members.organizationId, organizationId), eq(members.role, 'owner'), sql`${members.id} <> ${id}`),
  )

/** Locks the member row; the organization keeps at least one owner. */
async function lockMember(tx: Tx, organizationId: string, id: string) {
  const [row] = await tx
    .select()
    .from(members)
    .where(and(eq(members.id, id), eq(members.organizationId, organizationId)))
    .for('update')
  if (!row) throw notFound('member')
  // Serialise owner changes per organization so two demotions cannot both see another owner.
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`owners:${organizationId}`}))`)
  return row
}

export type MemberPatch = { user_name?: string; user_metadata?: Metadata | null; role?: MemberRole }

export function updateMember(ex: Executor, organizationId: string, id: string, patch: MemberPatch) {
  return inTransaction(ex, async (tx) => {
    const row = await lockMember(tx, organizationId, id)
    if (
      row.role === 'owner' &&
      patch.role &&
      patch.role !== 'owner' &&
      (await otherOwners(tx, organizationId, id)) === 0
    )
      throw new AppError('conflict', 'the organization must keep at least one owner')
    const userMetadata = mergeMetadata(row.userMetadata, patch.user_metadata, 'user_metadata')
    const [updated] = await tx
      .update(members)
      .set({ userName: patch.user_name ?? row.userName, userMetadata, role: patch.role ?? row.role })
      .where(eq(members.id, id))
      .returning()
    return toMemberResource(updated!)
  })
}

export function removeMember(ex: Executor, organizationId: string, id: string) {
  return inTransaction(ex, async (tx) => {
    const row = await lockMember(tx, organizationId, id)
    if (row.role === 'owner' && (await otherOwners(tx, organizationId, id)) === 0)
      throw new AppError('conflict', 'the organization must keep at least one owner')
    await tx.delete(members).where(eq(members.id, id))
  })
}
