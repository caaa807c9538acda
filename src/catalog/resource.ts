import { eq, getTableColumns, inArray } from 'drizzle-orm'
import { brands, products } from '../db/schema'
import type { Executor } from '../db/tx'
import { toShortId } from '../shared/ids'
import { dateLabelCompliance } from './date-labels'
import { ALL_FIELDS, FIELD_COLUMNS, type ProductField } from './fields'

/** The columns of a product as the service reads it (its search document is the search feature's). */
const PRODUCT_COLUMNS = getTableColumns(products)
export type ProductRow = typeof products.$inferSelect

export type ProductWithBrand = { product: ProductRow; brandName: string | null; brandOrg: string | null }

/** Each field's API name and column, looked up once (a list page copies 25 rows of them). */
const FIELD_ENTRIES = ALL_FIELDS.map((field) => [field, FIELD_COLUMNS[field]] as const)

/** The stored fields' values under their API names (PRODUCT_FIELDS order). */
function storedFields(p: ProductRow) {
  const out = {} as { [K in ProductField]: ProductRow[(typeof FIELD_COLUMNS)[K]] }
  for (const [field, column] of FIELD_ENTRIES) (out as Record<string, unknown>)[field] = p[column]
  return out
}

/** The recall in effect (contract §2): null when there is none; `url` null when the service serves the notice. */
const recallOf = (p: ProductRow) =>
  p.recallReason === null || p.recalledAt === null
    ? null
    : { reason: p.recallReason, recalled_at: p.recalledAt.toISOString(), url: p.recallUrl }

export function toProductResource({ product: p, brandName, brandOrg }: ProductWithBrand) {
  const stored = storedFields(p)
  return {
    id: toShortId(p.id),
    gtin: p.gtin,
    // claimed by a brand owner: the product has an owner, or its brand belongs to an organization
    is_claimed: p.ownerId !== null || brandOrg !== null,
    data_source: p.dataSource,
    confidence_score: p.confidenceScore,
    field_confidence: p.fieldConfidence,
    date_label_compliance: dateLabelCompliance(stored),
    metadata: p.metadata,
    brand: brandName ?? '',
    ...stored,
    owner_id: p.ownerId ? toShortId(p.ownerId) : null,
    claim_verification_status: p.claimVerificationStatus,
    contains_allergens: p.containsAllergens,
    may_contain_allergens: p.mayContainAllergens,
    certifications: p.certifications,
    substances: p.substances,
    recall: recallOf(p),
    created: p.created.toISOString(),
    modified: p.modified.toISOString(),
  }
}
export type ProductResource = ReturnType<typeof toProductResource>

export const productSelection = { product: PRODUCT_COLUMNS, brandName: brands.name, brandOrg: brands.organizationId }

/** Products with their brand, in the shape `toProductResource` takes. */
export const selectProducts = (ex: Executor) =>
  ex.select(productSelection).from(products).leftJoin(brands, eq(brands.id, products.brandId))

/** The product with its brand, by GTIN-14 (optionally locked for update: the product row only). */
export async function findProduct(ex: Executor, gtin14: string, lock = false): Promise<ProductWithBrand | null> {
  const query = selectProducts(ex).where(eq(products.gtin, gtin14))
  const [row] = await (lock ? query.for('update', { of: products }) : query)
  return row ?? null
}

/** A product's id by its GTIN-14, or null (for features that keep rows about products: offers). */
export async function productIdOf(ex: Executor, gtin14: string): Promise<string | null> {
  const [row] = await ex.select({ id: products.id }).from(products).where(eq(products.gtin, gtin14))
  return row?.id ?? null
}

/** The GTINs of the given products (those that exist), for features that name products by GTIN. */
export async function gtinsOf(ex: Executor, productIds: string[]): Promise<string[]> {
  if (productIds.length === 0) return []
  const rows = await ex.select({ gtin: products.gtin }).from(products).where(inArray(products.id, productIds))
  return rows.map((r) => r.gtin)
}
