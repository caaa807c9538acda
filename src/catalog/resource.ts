import { eq } from 'drizzle-orm'
import { brands, products } from '../db/schema'
import type { Executor } from '../db/tx'
import { toShortId } from '../shared/ids'
import { dateLabelCompliance } from './date-labels'

export type ProductRow = typeof products.$inferSelect
type Column = keyof ProductRow

/** API field -> column, for every scalar product field that is stored as given (not brand). */
export const FIELD_COLUMNS = {
  product_name: 'productName',
  manufacturer: 'manufacturer',
  description: 'description',
  image_url: 'imageUrl',
  country_of_origin: 'countryOfOrigin',
  net_content: 'netContent',
  net_content_value: 'netContentValue',
  net_content_uom: 'netContentUom',
  length: 'length',
  width: 'width',
  height: 'height',
  depth: 'depth',
  length_uom: 'lengthUom',
  width_uom: 'widthUom',
  height_uom: 'heightUom',
  depth_uom: 'depthUom',
  gross_weight: 'grossWeight',
  net_weight: 'netWeight',
  gross_weight_uom: 'grossWeightUom',
  net_weight_uom: 'netWeightUom',
  gpc_brick_code: 'gpcBrickCode',
  gpc_class_code: 'gpcClassCode',
  gpc_family_code: 'gpcFamilyCode',
  gpc_segment_code: 'gpcSegmentCode',
  ingredients_text: 'ingredientsText',
  usage_instructions: 'usageInstructions',
} as const satisfies Record<string, Column>
export type ProductField = keyof typeof FIELD_COLUMNS

export type ProductWithBrand = { product: ProductRow; brandName: string | null; brandOrg: string | null }

export function toProductResource({ product: p, brandName, brandOrg }: ProductWithBrand) {
  return {
    id: toShortId(p.id),
    gtin: p.gtin,
    product_name: p.productName,
    is_claimed: brandOrg !== null,
    data_source: p.dataSource,
    confidence_score: p.confidenceScore,
    field_confidence: p.fieldConfidence,
    date_label_compliance: dateLabelCompliance({
      product_name: p.productName,
      description: p.description,
      net_content: p.netContent,
      usage_instructions: p.usageInstructions,
    }),
    metadata: p.metadata,
    brand: brandName ?? '',
    manufacturer: p.manufacturer,
    description: p.description,
    image_url: p.imageUrl,
    country_of_origin: p.countryOfOrigin,
    net_content: p.netContent,
    net_content_value: p.netContentValue,
    net_content_uom: p.netContentUom,
    owner_id: p.ownerId ? toShortId(p.ownerId) : null,
    claim_verification_status: p.claimVerificationStatus,
    length: p.length,
    width: p.width,
    height: p.height,
    depth: p.depth,
    length_uom: p.lengthUom,
    width_uom: p.widthUom,
    height_uom: p.heightUom,
    depth_uom: p.depthUom,
    gross_weight: p.grossWeight,
    net_weight: p.netWeight,
    gross_weight_uom: p.grossWeightUom,
    net_weight_uom: p.netWeightUom,
    gpc_brick_code: p.gpcBrickCode,
    gpc_class_code: p.gpcClassCode,
    gpc_family_code: p.gpcFamilyCode,
    gpc_segment_code: p.gpcSegmentCode,
    ingredients_text: p.ingredientsText,
    usage_instructions: p.usageInstructions,
    contains_allergens: p.containsAllergens,
    may_contain_allergens: p.mayContainAllergens,
    certifications: p.certifications,
    substances: p.substances,
    created: p.created.toISOString(),
    modified: p.modified.toISOString(),
  }
}
export type ProductResource = ReturnType<typeof toProductResource>

export const productSelection = { product: products, brandName: brands.name, brandOrg: brands.organizationId }

/** The product with its brand, by GTIN-14 (optionally locked for update: the product row only). */
/** Products with their brand, in the shape `toProductResource` takes. */
export const selectProducts = (ex: Executor) =>
  ex.select(productSelection).from(products).leftJoin(brands, eq(brands.id, products.brandId))

export async function findProduct(ex: Executor, gtin14: string, lock = false): Promise<ProductWithBrand | null> {
  const query = selectProducts(ex).where(eq(products.gtin, gtin14))
  const [row] = await (lock ? query.for('update', { of: products }) : query)
  return row ?? null
}
