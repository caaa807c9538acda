import { sql } from 'drizzle-orm'
import { SEARCH_FIELDS } from '../../catalog/fields'
import { arrayParam } from '../../db/params'
import type { Executor } from '../../db/tx'
import { fieldColumn } from '../documents'
import { CONFIDENT, type Collection } from '../types'

/**
 * The Typesense documents of stored rows, by UUID (the document id). A row that no longer exists
 * has no document: the caller deletes it from the index. Inactive retailers keep theirs
 * (`is_active` is a filter).
 */
export type Document = { id: string } & Record<string, unknown>

const column = (name: string) => sql.raw(`"${name}"`)
const SEARCHED = sql.join(
  SEARCH_FIELDS.map((f) => sql`coalesce(p.${column(fieldColumn(f.name))}, '') as ${column(f.name)}`),
  sql`, `,
)

export async function loadDocuments(ex: Executor, collection: Collection, ids: string[]): Promise<Document[]> {
  if (ids.length === 0) return []
  const list = arrayParam(ids, 'uuid')
  if (collection === 'product') {
    const rows = await ex.execute<Document & { substances: { slug: string; confidence: number }[] }>(sql`
      select p.id::text as id, ${SEARCHED}, coalesce(b.name, '') as brand, p.gtin,
        p.gtin || ' ' || ltrim(p.gtin, '0') as gtin_text, p.contains_allergens, p.certifications,
        p.substances, coalesce(d.title_len, 0)::int as title_len, p.image_url
      from products p left join brands b on b.id = p.brand_id left join search_products d on d.id = p.id
      where p.id = any(${list})`)
    return rows.rows.map(({ substances, ...doc }) => ({
      ...doc,
      confident_substances: [...new Set(substances.filter((s) => s.confidence >= CONFIDENT).map((s) => s.slug))],
      substances: JSON.stringify(substances),
    }))
  }
  if (collection === 'brand') {
    const rows = await ex.execute<Document>(sql`
      select b.id::text as id, b.name, coalesce(d.title_len, 0)::int as title_len,
        (select count(*)::int from products c where c.brand_id = b.id) as product_count
      from brands b left join search_brands d on d.id = b.id where b.id = any(${list})`)
    return rows.rows
  }
  const rows = await ex.execute<Document>(sql`
    select r.id::text as id, r.name, r.category, r.is_active, r.is_canonical,
      coalesce(r.organization_id::text, '') as organization_id, r.is_online, r.is_physical,
      coalesce(d.title_len, 0)::int as title_len, r.website
    from retailers r left join search_retailers d on d.id = r.id where r.id = any(${list})`)
  return rows.rows
}
