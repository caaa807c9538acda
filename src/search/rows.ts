import { sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import type { SubstanceMatch } from '../db/schema'
import type { Executor } from '../db/tx'
import { toShortId } from '../shared/ids'
import { CONFIDENT, type SearchInput, type SearchRow } from './types'

export type RawRow = {
  type: SearchRow['type']
  id: string
  rank: number
  product_name: string | null
  gtin: string | null
  brand_name: string | null
  image_url: string | null
  contains_allergens: string[] | null
  certifications: string[] | null
  substances: SubstanceMatch[] | null
  brand: string | null
  product_count: number | null
  retailer: string | null
  website: string | null
  is_online: boolean | null
  is_physical: boolean | null
}

/** The fields of ranked hits, in their order (rank descending, then id). */
export async function rowsOf(
  ex: Executor,
  hits: { type: SearchRow['type']; id: string; rank: number }[],
): Promise<RawRow[]> {
  if (hits.length === 0) return []
  const types = arrayParam(
    hits.map((h) => h.type),
    'text',
  )
  const ids = arrayParam(
    hits.map((h) => h.id),
    'uuid',
  )
  const ranks = arrayParam(
    hits.map((h) => h.rank),
    'float8',
  )
  const result = await ex.execute<RawRow>(sql`with hits as (
      select * from unnest(${types}, ${ids}, ${ranks}) as h(type, id, rank))
    select h.type, h.id, h.rank,
      p.product_name, p.gtin, p.brand_name, p.image_url, p.contains_allergens, p.certifications, p.substances,
      b.name as brand, (select count(*)::int from products c where c.brand_id = b.id) as product_count,
      r.name as retailer, r.website, r.is_online, r.is_physical
    from hits h
      left join products p on h.type = 'product' and p.id = h.id
      left join brands b on h.type = 'brand' and b.id = h.id
      left join retailers r on h.type = 'retailer' and r.id = h.id
    order by h.rank desc, h.id`)
  return result.rows
}

export function toRow(raw: RawRow, match: SearchRow['match'], input: SearchInput): SearchRow {
  const base = { id: toShortId(raw.id), rank: Math.round(raw.rank * 1e6) / 1e6, match }
  if (raw.type === 'product')
    return {
      type: 'product',
      ...base,
      name: raw.product_name!,
      gtin: raw.gtin!,
      brand: raw.brand_name!,
      image_url: raw.image_url!,
      contains_allergens: raw.contains_allergens!,
      certifications: raw.certifications!,
      substance_flags: (raw.substances ?? []).filter(
        (s) => input.excludeSubstances.includes(s.slug) && s.confidence < CONFIDENT,
      ),
    }
  if (raw.type === 'brand') return { type: 'brand', ...base, name: raw.brand!, product_count: raw.product_count! }
  return {
    type: 'retailer',
    ...base,
    name: raw.retailer!,
    website: raw.website!,
    is_online: raw.is_online!,
    is_physical: raw.is_physical!,
  }
}
