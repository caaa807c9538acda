import { eq } from 'drizzle-orm'
import { products } from '../db/schema'
import { type Executor, inTransaction } from '../db/tx'
import { emit } from '../events/outbox'
import { refreshSearchDocuments } from '../search'
import { AppError, notFound } from '../shared/errors'
import { brandFor, organizationProfile } from './brands'
import { normalizeGtin } from './gtin'
import { holdPrefixesSteady, refuseForeignPrefix } from './prefixes'
import { lockOwned } from './products'
import { promoteProducts } from './promotion'
import { findProduct, toProductResource } from './resource'
import { sendVerificationSignals } from './verification'

/**
 * Claim an existing GTIN: the product links to a brand of the claiming organization (its brand's
 * name, or the organization's). Again by the owner: unchanged (idempotent). Under a GS1 company
 * prefix another organization holds: 409 `conflict`. Held by another: 409 `already_claimed`,
 * unless the claimant holds the GTIN's company prefix: then its claim takes the product over (a
 * claim made without the prefix, disputed or not, yields to the prefix's registered holder), with
 * `product.unclaimed` to the organization that held it and `product.claimed` to the claimant.
 */
export function claimProduct(ex: Executor, organizationId: string, gtinInput: string) {
  const gtin = normalizeGtin(gtinInput)
  return inTransaction(ex, async (tx) => {
    // the prefixes' lock before the product's row: a registration takes them in that order
    await holdPrefixesSteady(tx)
    const found = await findProduct(tx, gtin, true)
    if (!found) throw notFound('product')
    const { product } = found
    const holder = await refuseForeignPrefix(tx, organizationId, gtin, 'claim')
    if (product.ownerId === organizationId) return toProductResource(found)
    const previous = product.ownerId ?? found.brandOrg
    if (previous !== null && holder !== organizationId)
      throw new AppError('already_claimed', `${gtin} is claimed by another organization`)
    const org = await organizationProfile(tx, organizationId)
    const brandId = found.brandName ? await brandFor(tx, organizationId, found.brandName) : null
    await tx
      .update(products)
      .set({ ownerId: organizationId, brandId, claimVerificationStatus: 'unverified', modified: new Date() })
      .where(eq(products.id, product.id))
    // taken over: the former holder's owner values no longer decide the record
    if (previous !== null) await promoteProducts(tx, [product.id], { reset: true })
    await refreshSearchDocuments(tx, 'product', [product.id])
    const resource = toProductResource((await findProduct(tx, gtin))!)
    if (previous !== null)
      await emit(tx, {
        eventType: 'product.unclaimed',
        organizationId: previous,
        subjectId: product.id,
        data: resource,
      })
    await emit(tx, { eventType: 'product.claimed', organizationId, subjectId: product.id, data: resource })
    await sendVerificationSignals(tx, product.id, organizationId, gtin, org.prefixes)
    return resource
  })
}

/**
 * Spec #3, unclaim: the product stays in the catalog; it links to the unowned brand of the same
 * name, so `is_claimed` is false, and `owner_id` and `claim_verification_status` become null.
 * Only the owning organization can unclaim (403 otherwise).
 */
export function unclaimProduct(
  ex: Executor,
  organizationId: string,
  gtinInput: string,
  bodyOrganization?: string | null,
) {
  const gtin = normalizeGtin(gtinInput)
  if (bodyOrganization && bodyOrganization !== organizationId)
    throw new AppError('forbidden', 'organization_id must be the organization of the API key')
  return inTransaction(ex, async (tx) => {
    const { product, brandName } = await lockOwned(tx, organizationId, gtin)
    const brandId = brandName ? await brandFor(tx, null, brandName) : null
    await tx
      .update(products)
      .set({ ownerId: null, brandId, claimVerificationStatus: null, modified: new Date() })
      .where(eq(products.id, product.id))
    await refreshSearchDocuments(tx, 'product', [product.id])
    const resource = toProductResource((await findProduct(tx, gtin))!)
    await emit(tx, { eventType: 'product.unclaimed', organizationId, subjectId: product.id, data: resource })
    return resource
  })
}
