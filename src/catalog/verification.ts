import { eq } from 'drizzle-orm'
import { organizations, products } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { verificationFor } from './brands'
import { verifyQueue } from './queues'
import { findProduct, toProductResource } from './resource'

/**
 * Claim verification (spec: states and transitions). A create or claim records the claim as
 * `unverified`; verification signals then upgrade it, each as a `catalog.verify` job sent with the
 * claim. Today's signal: the GTIN lies under one of the organization's GS1 company prefixes, which
 * moves `unverified` to `prefix_matched` (with `product.updated`). `disputed` is set when another
 * organization registers the GTIN's company prefix (src/catalog/prefixes.ts); `verified` and
 * `rejected` are for signals and reviews still to come.
 */
export async function sendVerificationSignals(
  tx: Tx,
  productId: string,
  organizationId: string,
  gtin14: string,
  prefixes: string[],
) {
  if (verificationFor(gtin14, prefixes) === 'prefix_matched')
    await verifyQueue.send(tx, { productId, organizationId, signal: 'gs1_prefix' })
}

/** The `catalog.verify` job: applies the signal if the claim it was sent for still stands. Idempotent. */
export function applyPrefixSignal(ex: Executor, productId: string, organizationId: string) {
  return inTransaction(ex, async (tx) => {
    const [row] = await tx
      .select({ gtin: products.gtin, ownerId: products.ownerId, status: products.claimVerificationStatus })
      .from(products)
      .where(eq(products.id, productId))
      .for('update')
    if (!row || row.ownerId !== organizationId || row.status !== 'unverified') return false
    const [org] = await tx
      .select({ prefixes: organizations.gs1CompanyPrefixes })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
    if (!org || verificationFor(row.gtin, org.prefixes) !== 'prefix_matched') return false
    await tx
      .update(products)
      .set({ claimVerificationStatus: 'prefix_matched', modified: new Date() })
      .where(eq(products.id, productId))
    const resource = toProductResource((await findProduct(tx, row.gtin))!)
    await emit(tx, { eventType: 'product.updated', organizationId, subjectId: productId, data: resource })
    return true
  })
}
