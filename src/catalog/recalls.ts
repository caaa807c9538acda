import { eq, sql } from 'drizzle-orm'
import { products } from '../db/schema'
import { afterCommit, type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { INDEX_CHANNEL, ruleIndex } from '../resolver/rule-index'
import { storedUrl } from '../resolver/rules'
import { AppError, invalidField } from '../shared/errors'
import { normalizeGtin } from './gtin'
import { lockOwned } from './products'
import type { RecallBody } from './recall-schemas'
import { findProduct, toProductResource } from './resource'

/** Clocks disagree a little: a recall "issued" this far ahead of ours is taken as now-ish, not refused. */
const CLOCK_SKEW_MS = 5 * 60_000

/**
 * `recalled_at` as an instant. The schema has checked the form; here: the day exists in its month
 * as written (Date rolls 02-30 over to March), the instant falls in years 1000-9999, and it is not
 * in the future (a recall is in effect from the moment it is posted; `recalled_at` says when it
 * was issued, which may be earlier, e.g. the regulator's date).
 */
function recalledAt(value: string | undefined, now: Date): Date {
  if (value === undefined) return now
  const at = new Date(value)
  const offset = /([+-])([0-9]{2}):([0-9]{2})$/.exec(value)
  const minutes = offset ? (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) : 0
  const local = new Date(at.getTime() + minutes * 60_000)
  const asWritten =
    !Number.isNaN(at.getTime()) &&
    local.getUTCFullYear() === Number(value.slice(0, 4)) &&
    local.getUTCMonth() + 1 === Number(value.slice(5, 7)) &&
    local.getUTCDate() === Number(value.slice(8, 10))
  if (!asWritten || at.getUTCFullYear() < 1000 || at.getUTCFullYear() > 9999)
    throw invalidField('recalled_at', 'must be an existing date and time with a year from 1000 to 9999')
  if (at.getTime() > now.getTime() + CLOCK_SKEW_MS) throw invalidField('recalled_at', 'must not be in the future')
  return at
}

/**
 * The product, locked, for a recall change by its owner: 404 when absent, 403 when another
 * organization (or none) owns it, 409 while the claim is disputed or rejected (as for PATCH: a
 * contested claim speaks with no owner's authority).
 */
async function lockForRecall(tx: Tx, organizationId: string, gtin: string) {
  const found = await lockOwned(tx, organizationId, gtin)
  const status = found.product.claimVerificationStatus
  if (status === 'disputed' || status === 'rejected')
    throw new AppError(
      'conflict',
      `the claim on ${gtin} is ${status}: its recall cannot be changed until the claim is settled`,
    )
  return found
}

/**
 * Every process's resolver hears of the change when it commits (NOTIFY is sent at commit), and
 * this one forgets its copy at once: the next scan of the product serves the new state.
 */
async function announce(tx: Tx, gtin: string) {
  await tx.execute(sql`select pg_notify(${INDEX_CHANNEL}, ${`product:${gtin}`})`)
  afterCommit(tx, () => ruleIndex.forgetProduct(gtin))
}

/**
 * Recalls a product (issue 46): the owner's statement, attributed to its organization. Recalling a
 * recalled product replaces the recall (a corrected reason or notice) and announces it again.
 * Emits `product.recalled` with the resource, in the same transaction.
 */
export function recallProduct(ex: Executor, organizationId: string, gtinInput: string, body: RecallBody) {
  const gtin = normalizeGtin(gtinInput)
  const url = body.url === undefined || body.url === null ? null : storedUrl(body.url, 'url')
  const now = new Date()
  const at = recalledAt(body.recalled_at, now)
  return inTransaction(ex, async (tx) => {
    const { product } = await lockForRecall(tx, organizationId, gtin)
    await tx
      .update(products)
      .set({ recallReason: body.reason, recalledAt: at, recallUrl: url, recalledBy: organizationId, modified: now })
      .where(eq(products.id, product.id))
    const resource = toProductResource((await findProduct(tx, gtin))!)
    await emit(tx, { eventType: 'product.recalled', organizationId, subjectId: product.id, data: resource })
    await announce(tx, gtin)
    return resource
  })
}

/**
 * Ends the recall in effect: the product's links are the rules' again. Emits `product.updated`.
 * A product under no recall is returned as it is, with no event (DELETE is idempotent).
 */
export function endRecall(ex: Executor, organizationId: string, gtinInput: string) {
  const gtin = normalizeGtin(gtinInput)
  return inTransaction(ex, async (tx) => {
    const found = await lockForRecall(tx, organizationId, gtin)
    if (found.product.recalledAt === null) return toProductResource(found)
    await tx
      .update(products)
      .set({ recallReason: null, recalledAt: null, recallUrl: null, recalledBy: null, modified: new Date() })
      .where(eq(products.id, found.product.id))
    const resource = toProductResource((await findProduct(tx, gtin))!)
    await emit(tx, { eventType: 'product.updated', organizationId, subjectId: found.product.id, data: resource })
    await announce(tx, gtin)
    return resource
  })
}
