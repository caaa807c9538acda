import type { CompiledRule } from './conditions'
import { DEFAULT_LINK } from './formats'
import type { ProductRef } from './rule-index'

/** Where the service serves the notice of a recall given without a URL (src/catalog/recall-routes.ts). */
export const recallNoticePath = (gtin: string) => `/products/recall/${gtin}`

/** Above SERIAL (5): a recall outranks every rule, so no rule ties with it. */
const RECALL_SPECIFICITY = 6
const TITLE = 'Product recall notice'

function recallRule(product: ProductRef, origin: string, linkType: string): CompiledRule {
  return {
    // `?explain=1` shows it as the product's own entry, ahead of its rules (order_index -1)
    id: product.id,
    organizationId: product.ownerId ?? '',
    scopeType: 'PRODUCT',
    specificity: RECALL_SPECIFICITY,
    scopeId: product.id,
    productId: product.id,
    orderIndex: -1,
    created: 0,
    startMs: null,
    endMs: null,
    annualStart: null,
    annualEnd: null,
    days: 0,
    todStart: null,
    todEnd: null,
    timezone: 'UTC',
    linkType,
    countries: null,
    regions: null,
    cities: null,
    href: product.recallUrl ?? `${origin}${recallNoticePath(product.gtin)}`,
    anchor: '',
    title: TITLE,
    mediaType: 'text/html',
    hreflang: [],
  }
}

/**
 * A recalled product's rules with its recall ahead of them (issue 46): the recall notice is its
 * `gs1:recallStatus` link and, while the recall lasts, its default link too, so a shopper who scans
 * the pack lands on the notice; the other link types are served by the rules as before. The rules
 * unchanged (the same array) when the product is not recalled: this runs for every scan.
 */
export function withRecall(product: ProductRef, origin: string, rules: CompiledRule[]): CompiledRule[] {
  if (product.recalledAt === null) return rules
  return [recallRule(product, origin, 'gs1:recallStatus'), recallRule(product, origin, DEFAULT_LINK), ...rules]
}
