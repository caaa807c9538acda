import { eq } from 'drizzle-orm'
import { products } from '../db/schema'
import { withTx } from '../db/tx'
import { notFound } from '../shared/errors'
import { brandFor } from './brands'
import { normalizeGtin } from './gtin'
import { analyzeIngredients } from './ingredients/analyze'
import { candidatesOf, decide, recordCandidates, summarize } from './provenance'
import { FIELD_COLUMNS, findProduct, type ProductField, toProductResource } from './resource'
import type { CONTRIBUTABLE } from './schemas'

type Contributed = Partial<Record<(typeof CONTRIBUTABLE)[number], string>>

/**
 * A crowd contribution (202): stored as candidates from the contributing organization, and a
 * `catalog.promote` job queued in the same transaction. Date labels are flagged on read, not rejected.
 */
export async function contribute(organizationId: string, gtinInput: string, fields: Contributed) {
  const gtin = normalizeGtin(gtinInput)
  const { enqueue } = await import('../../jobs/catalog-promote')
  return withTx(async (tx) => {
    const found = await findProduct(tx, gtin)
    if (!found) throw notFound('product')
    await recordCandidates(tx, found.product.id, fields, 'crowd_sourced', organizationId)
    await enqueue(tx, { productId: found.product.id })
    return { gtin, accepted: Object.keys(fields), status: 'queued for promotion' }
  })
}

/**
 * Applies the decided canonical values to the product (the `catalog.promote` job). Idempotent:
 * running it again changes nothing; `product.updated` is emitted only when something changed.
 */
export function promoteProduct(productId: string) {
  return withTx(async (tx, emit) => {
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
    emit({ eventType: 'product.updated', organizationId: before.product.ownerId, subjectId: productId, data: resource })
    return true
  })
}
