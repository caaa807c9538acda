import { and, eq, isNull, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { prepared } from '../db/prepared'
import { apiKeys } from '../db/schema'
import { type Executor, inTransaction } from '../db/tx'
import { toShortId } from '../shared/ids'
import { maskSecret } from '../shared/mask'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { type PageQuery, paginate } from '../shared/pagination'
import { type Caller, keyCache, REVOCATION_CHANNEL } from './key-cache'
import { hashKey, looksLikeKey, newRawKey } from './key-material'
import type { ApiKeyRole } from './roles'

type ApiKeyRow = typeof apiKeys.$inferSelect

export function toApiKeyResource(row: ApiKeyRow, rawKey?: string) {
  return {
    id: toShortId(row.id),
    name: row.name,
    role: row.role,
    created: row.created.toISOString(),
    key: rawKey ?? maskSecret(row.keyPrefix),
    metadata: row.metadata,
    description: row.description,
  }
}

export type ApiKeyInput = { name: string; description?: string; role?: ApiKeyRole; metadata?: Metadata | null }

/** Creates a key; the raw value is returned here and never again (only its hash is stored). */
export async function createApiKey(ex: Executor, organizationId: string, input: ApiKeyInput) {
  const raw = newRawKey()
  const [row] = await ex
    .insert(apiKeys)
    .values({
      organizationId,
      name: input.name,
      description: input.description ?? '',
      role: input.role ?? 'readonly',
      metadata: mergeMetadata({}, input.metadata),
      keyPrefix: raw.slice(0, 8),
      keyHash: hashKey(raw),
    })
    .returning()
  return toApiKeyResource(row!, raw)
}

const live = (organizationId: string) => and(eq(apiKeys.organizationId, organizationId), isNull(apiKeys.revokedAt))

export function listApiKeys(organizationId: string, page: PageQuery) {
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({ key: apiKeys, total_count: sql<number>`count(*) over ()` })
        .from(apiKeys)
        .where(live(organizationId))
        .orderBy(apiKeys.created, apiKeys.id)
        .limit(limit)
        .offset(offset),
    async () => (await db.$count(apiKeys, live(organizationId))) as number,
    (r) => toApiKeyResource(r.key),
  )
}

/**
 * Revokes a key: it stops working on the next request here, and in other processes as soon as
 * they receive the notification sent on commit. False when no live key of the organization has that id.
 */
export async function revokeApiKey(ex: Executor, organizationId: string, keyId: string): Promise<boolean> {
  const hash = await inTransaction(ex, async (tx) => {
    const [row] = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.id, keyId), live(organizationId)))
      .returning({ keyHash: apiKeys.keyHash })
    if (row) await tx.execute(sql`select pg_notify(${REVOCATION_CHANNEL}, ${row.keyHash})`)
    return row?.keyHash
  })
  if (hash) keyCache.forget(hash)
  return hash !== undefined
}

const findLiveKey = () =>
  prepared('api_keys_find_live', (name) =>
    db
      .select({ keyId: apiKeys.id, organizationId: apiKeys.organizationId, role: apiKeys.role })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, sql.placeholder('hash')), isNull(apiKeys.revokedAt)))
      .limit(1)
      .prepare(name),
  )

/**
 * The caller of a key the cache holds, without a promise (the resolver's hot path): null for no
 * key or one of the wrong shape, undefined when `authenticate` must look it up.
 */
export function knownCaller(raw: string | undefined): Caller | null | undefined {
  if (!raw || !looksLikeKey(raw)) return null
  return keyCache.get(hashKey(raw)) ?? undefined
}

/** Lookups under way by key hash: concurrent requests of one key share one (below). */
const lookups = new Map<string, Promise<Caller | null>>()

/**
 * The caller a raw key stands for, or null; cached so a warm key costs no database round trip.
 * When a busy key's entry expires, its concurrent requests share one lookup: each doing its own
 * needed as many connections at once, and a pool whose idle connections had closed opened them
 * all together (a latency spike of hundreds of milliseconds once a minute under load).
 */
export async function authenticate(raw: string | undefined): Promise<Caller | null> {
  const known = knownCaller(raw)
  if (known !== undefined) return known
  const hash = hashKey(raw!)
  let lookup = lookups.get(hash)
  if (!lookup) {
    lookup = lookUp(hash).finally(() => lookups.delete(hash))
    lookups.set(hash, lookup)
  }
  return lookup
}

async function lookUp(hash: string): Promise<Caller | null> {
  const [found] = await findLiveKey().execute({ hash })
  if (!found) return null
  keyCache.set(hash, found)
  return found
}
