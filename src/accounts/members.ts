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

/**
 * Contract §4: no key creates, promotes to, demotes, changes or removes the organization's owner
 * member. Keys are not people: a key held by a manager cannot prove that the owner asked. The
 * owner's own request reaches the platform, which transfers ownership with the admin token
 * (transferOwnership).
 */
const OWNER_BY_REQUEST =
  "ownership passes only at the owner's own request, which the platform carries out (POST …/ownership with the admin token)"
const ownerUntouchable = (what: string) => new AppError('forbidden', `no API key can ${what}: ${OWNER_BY_REQUEST}`)

export async function addMember(ex: Executor, organizationId: string, input: MemberInput) {
  if (input.role === 'owner') throw ownerUntouchable('add an owner')
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

/** Locks the member row (404 when it is not of this organization) after the organization's owner lock. */
async function lockMember(tx: Tx, organizationId: string, id: string) {
  // Serialise owner changes per organization: a transfer and a change of the same rows queue up.
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`owners:${organizationId}`}))`)
  const [row] = await tx
    .select()
    .from(members)
    .where(and(eq(members.id, id), eq(members.organizationId, organizationId)))
    .for('update')
  if (!row) throw notFound('member')
  return row
}

export type MemberPatch = { user_name?: string; user_metadata?: Metadata | null; role?: MemberRole }

/** A key's change of a member; the owner member, and making anyone owner, are refused (403). */
export function updateMember(ex: Executor, organizationId: string, id: string, patch: MemberPatch) {
  return inTransaction(ex, async (tx) => {
    const row = await lockMember(tx, organizationId, id)
    if (row.role === 'owner') throw ownerUntouchable("change the organization's owner member")
    if (patch.role === 'owner') throw ownerUntouchable('make a member the owner')
    const userMetadata = mergeMetadata(row.userMetadata, patch.user_metadata, 'user_metadata')
    const [updated] = await tx
      .update(members)
      .set({ userName: patch.user_name ?? row.userName, userMetadata, role: patch.role ?? row.role })
      .where(eq(members.id, id))
      .returning()
    return toMemberResource(updated!)
  })
}

/** A key's removal of a member; the owner member is refused (403). */
export function removeMember(ex: Executor, organizationId: string, id: string) {
  return inTransaction(ex, async (tx) => {
    const row = await lockMember(tx, organizationId, id)
    if (row.role === 'owner') throw ownerUntouchable("remove the organization's owner member")
    await tx.delete(members).where(eq(members.id, id))
  })
}

export type OwnershipTransfer = {
  /** the owner whose request this is */
  from_member_id: string
  /** the member who becomes the owner */
  to_member_id: string
  /** what the previous owner becomes (default manager) */
  previous_owner_role?: Exclude<MemberRole, 'owner'>
}

/**
 * The owner's own request, carried out by the platform (admin token): `to` becomes the owner and
 * the owner `from` takes `previous_owner_role`, in one transaction, so the organization always
 * has its owner. A request from a member who is not (or no longer) an owner is 409.
 */
export function transferOwnership(ex: Executor, organizationId: string, transfer: OwnershipTransfer) {
  return inTransaction(ex, async (tx) => {
    const from = await lockMember(tx, organizationId, transfer.from_member_id)
    const to = await lockMember(tx, organizationId, transfer.to_member_id)
    if (from.role !== 'owner')
      throw new AppError(
        'conflict',
        'from_member_id is not an owner of the organization: only the owner hands ownership on',
      )
    if (from.id === to.id) throw new AppError('conflict', 'from_member_id and to_member_id are the same member')
    const [previous] = await tx
      .update(members)
      .set({ role: transfer.previous_owner_role ?? 'manager' })
      .where(eq(members.id, from.id))
      .returning()
    const [owner] = await tx.update(members).set({ role: 'owner' }).where(eq(members.id, to.id)).returning()
    return { owner: toMemberResource(owner!), previous_owner: toMemberResource(previous!) }
  })
}
