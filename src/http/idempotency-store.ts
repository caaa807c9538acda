import { and, eq, isNull, lt, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { idempotencyKeys } from '../db/schema'

/** How long a key's response is replayed (Stripe's 24 h). */
export const IDEMPOTENCY_HOURS = 24

/** What identifies a request besides its body: who sent it, to what, as what. */
export type Fingerprint = {
  scope: string
  key: string
  caller: string
  method: string
  path: string
  contentType: string
}

export type KeyRow = typeof idempotencyKeys.$inferSelect

/**
 * A request still running after this long is taken to have died with its process (the longest a
 * request can take is an upload's UPLOAD_TIMEOUT_SECONDS): its key may be claimed again.
 */
const staleSeconds = () => config.UPLOAD_TIMEOUT_SECONDS + 60

/**
 * Claims the key for a request about to run: a new key, one past its 24 h, or one whose request
 * died is taken (one statement, so of two concurrent requests exactly one wins). Returns the lock
 * token, or the row that holds the key (running, or answered).
 */
export async function claimKey(fp: Fingerprint): Promise<{ token: string } | { row: KeyRow }> {
  for (;;) {
    const token = crypto.randomUUID()
    const claimed = await db.execute<{ lock_token: string }>(sql`
      insert into idempotency_keys (scope, key, caller, method, path, content_type, lock_token)
      values (${fp.scope}, ${fp.key}, ${fp.caller}, ${fp.method}, ${fp.path}, ${fp.contentType}, ${token})
      on conflict (scope, key) do update set caller = excluded.caller, method = excluded.method,
        path = excluded.path, content_type = excluded.content_type, lock_token = excluded.lock_token,
        request_bytes = null, request_hash = null, response_status = null, response_headers = null,
        response_body = null, created = now(), finished_at = null
      where idempotency_keys.created < now() - make_interval(hours => ${IDEMPOTENCY_HOURS})
        or (idempotency_keys.response_status is null
          and idempotency_keys.created < now() - make_interval(secs => ${staleSeconds()}))
      returning lock_token`)
    if (claimed.rows[0]) return { token }
    const [row] = await db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.scope, fp.scope), eq(idempotencyKeys.key, fp.key)))
    // released between the two statements: claim again
    if (row) return { row }
  }
}

/** The stored answer of a request that ran to its end. */
export type Answer = {
  requestHash: string
  requestBytes: number
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** Stores a claimed key's answer (nothing when the claim was taken over meanwhile). */
export async function storeAnswer(fp: Fingerprint, token: string, answer: Answer) {
  await db
    .update(idempotencyKeys)
    .set({
      requestHash: answer.requestHash,
      requestBytes: answer.requestBytes,
      responseStatus: answer.status,
      responseHeaders: answer.headers,
      responseBody: answer.body,
      lockToken: null,
      finishedAt: new Date(),
    })
    .where(
      and(eq(idempotencyKeys.scope, fp.scope), eq(idempotencyKeys.key, fp.key), eq(idempotencyKeys.lockToken, token)),
    )
}

/** Gives a claimed key up, unanswered: the request may be sent again with it. */
export async function releaseKey(fp: Fingerprint, token: string) {
  await db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.scope, fp.scope),
        eq(idempotencyKeys.key, fp.key),
        eq(idempotencyKeys.lockToken, token),
        isNull(idempotencyKeys.responseStatus),
      ),
    )
}

/** Deletes the keys past their 24 h (the `idempotency.sweep` schedule); returns how many. */
export async function sweepIdempotencyKeys(now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_HOURS * 3600_000)
  const deleted = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.created, cutoff))
  return deleted.rowCount ?? 0
}
