import type { SubstanceMatch } from '../db/schema'

export const COLLECTIONS = ['product', 'brand', 'retailer'] as const
export type Collection = (typeof COLLECTIONS)[number]

/** A substance match this confident drops a product from a search that excludes the substance. */
export const CONFIDENT = 0.8

export type SearchInput = {
  q: string
  types: Collection[]
  limit: number
  excludeAllergens: string[]
  certifications: string[]
  /** canonical slugs (aliases resolved) */
  excludeSubstances: string[]
  /** the caller's organization (its own retailers are searched too), or null when anonymous */
  organizationId: string | null
}

type RowBase = { id: string; name: string; rank: number; match: 'gtin' | 'fulltext' | 'substring' | 'fuzzy' }
export type SearchRow =
  | (RowBase & {
      type: 'product'
      gtin: string
      brand: string
      image_url: string
      contains_allergens: string[]
      certifications: string[]
      substance_flags: SubstanceMatch[]
    })
  | (RowBase & { type: 'brand'; product_count: number })
  | (RowBase & { type: 'retailer'; website: string; is_online: boolean; is_physical: boolean })
