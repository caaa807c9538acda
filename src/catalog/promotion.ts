import { eq } from 'drizzle-orm'
import { products } from '../db/schema'
import { type Executor, inTransaction } from '../db/tx'
import { emit } from '../events/outbox'
import { notFound } from '../shared/errors'
import { brandFor } from './brands'
import { type ContributableField, FIELD_COLUMNS, type ProductField } from './fields'
import { normalizeGtin } from './gtin'
import { analyzeIngredients } from './ingredients/analyze'
import { candidatesOf, decide, recordCandidates, summarize } from './provenance'
import { promoteQueue } from './queues'
import { findProduct, toProductResource } from './resource'

type Contributed = Partial<Record<ContributableField, string>>

/**
 * A crowd contribution (202): stored as candidates from the contributing organization, and a
 * `catalog.promote` job queued in the same transaction. Date labels are flagged on read, not rejected.
 */
export async function contribute(ex: Executor, organizationId: string, gtinInput: string, fields: Contributed) {
  const gtin = normalizeGtin(gtinInput)
  return inTransaction(ex, async (tx) => {
    const found = await findProduct(tx, gtin)
    if (!found) throw notFound('product')
    await recordCandidates(tx, found.product.id, fields, 'crowd_sourced', organizationId)
    await promoteQueue.send(tx, { productId: found.product.id })
    return { gtin, accepted: Object.keys(fields), status: 'queued for promotion' }
  })
}

/**
 * Applies the decided canonical values to the product (the `catalog.promote` job). Idempotent:
 * running it again changes nothing; `product.updated` is emitted only when something changed.
 */
export function promoteProduct(ex: Executor, productId: string) {
  return inTransaction(ex, async (tx) => {
    const [row] = await tx
      .select({ gtin: products.gtin })
      .from(products)
      .where(eq(products.id, productId))
      .for('update')
    if (!row) return false
    const before = (await findProduct(tx, row.gtin))!
    const winners = decide(await candidatesOf(tx, productId))
    const changes: Record<string, unknown> = {}
    for (const [field, winner] of winners) {
      if (field === 'brand') continue
      const column = FIELD_COLUMNS[field as ProductField]
      if (column && JSON.stringify(before.product[column]) !== JSON.stringify(winner.value))
        changes[column] = winner.value
    }
    const brand = winners.get('brand')
    if (brand && brand.value !== before.brandName && typeof brand.value === 'string' && brand.value)
      changes.brandId = await brandFor(tx, before.brandOrg, brand.value)
    if (typeof changes.ingredientsText === 'string') {
      const a = analyzeIngredients(changes.ingredientsText)
      Object.assign(changes, {
        containsAllergens: a.contains,
        mayContainAllergens: a.mayContain,
        certifications: a.certifications,
        substances: a.substances,
      })
    }
    const summary = summarize(winners)
    const changed =
      Object.keys(changes).length > 0 ||
      JSON.stringify(summary.fieldConfidence) !== JSON.stringify(before.product.fieldConfidence)
    if (!changed) return false
    await tx
      .update(products)
      .set({ ...changes, ...summary, modified: new Date() })
      .where(eq(products.id, productId))
    const resource = toProductResource((await findProduct(tx, row.gtin))!)
    await emit(tx, {
      eventType: 'product.updated',
      organizationId: before.product.ownerId,
      subjectId: productId,
      data: resource,
    })
    return true
  })
}
