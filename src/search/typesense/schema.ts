import { SEARCH_FIELDS } from '../../catalog/fields'
import type { Collection } from '../types'

/**
 * The Typesense collections (Typesense mode), declared here and created from this declaration by
 * `ensureCollections` and `search reindex`. A product's searchable fields come from the product
 * field list with their weights (A-D), plus its brand and GTIN; the rest are filters and the
 * fields of the response rows (stored, not indexed).
 */
export type FieldSchema = {
  name: string
  type: 'string' | 'string[]' | 'int32' | 'bool'
  optional?: boolean
  index?: boolean
  facet?: boolean
  infix?: boolean
}
export type CollectionSchema = { name: string; fields: FieldSchema[] }

const WEIGHTS = { A: 4, B: 3, C: 2, D: 1 } as const

/** The searched fields of each collection, best first, with their query_by_weights. */
export const QUERY_BY: Record<Collection, { field: string; weight: number }[]> = {
  product: [
    ...SEARCH_FIELDS.map((f) => ({ field: f.name as string, weight: WEIGHTS[f.weight] })),
    { field: 'brand', weight: WEIGHTS.B },
    { field: 'gtin_text', weight: WEIGHTS.A },
  ].sort((a, b) => b.weight - a.weight),
  brand: [{ field: 'name', weight: WEIGHTS.A }],
  retailer: [
    { field: 'name', weight: WEIGHTS.A },
    { field: 'category', weight: WEIGHTS.C },
  ],
}
/** The field that names the row: searched by infix in the substring tier. */
export const NAME_FIELD: Record<Collection, string> = {
  product: 'product_name',
  brand: 'name',
  retailer: 'name',
}

const searched = (c: Collection): FieldSchema[] =>
  QUERY_BY[c].map(({ field }) => ({ name: field, type: 'string', ...(field === NAME_FIELD[c] ? { infix: true } : {}) }))
const stored = (name: string, type: FieldSchema['type'] = 'string'): FieldSchema => ({
  name,
  type,
  index: false,
  optional: true,
})

export const COLLECTIONS: Record<Collection, CollectionSchema> = {
  product: {
    name: 'products',
    fields: [
      ...searched('product'),
      { name: 'gtin', type: 'string' },
      { name: 'contains_allergens', type: 'string[]', facet: true },
      { name: 'certifications', type: 'string[]', facet: true },
      { name: 'confident_substances', type: 'string[]' },
      { name: 'title_len', type: 'int32' },
      stored('image_url'),
      stored('substances'),
    ],
  },
  brand: {
    name: 'brands',
    fields: [...searched('brand'), { name: 'product_count', type: 'int32' }, { name: 'title_len', type: 'int32' }],
  },
  retailer: {
    name: 'retailers',
    fields: [
      ...searched('retailer'),
      { name: 'is_active', type: 'bool' },
      { name: 'is_canonical', type: 'bool' },
      { name: 'organization_id', type: 'string' },
      { name: 'is_online', type: 'bool' },
      { name: 'is_physical', type: 'bool' },
      { name: 'title_len', type: 'int32' },
      stored('website'),
    ],
  },
}
