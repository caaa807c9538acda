import { sql } from 'drizzle-orm'
import { SEARCH_FIELDS } from '../../catalog/fields'
import { arrayParam } from '../../db/params'
import type { Executor } from '../../db/tx'
import { fieldColumn } from '../documents'
import { SOURCES } from '../sources'
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
      select p.id::text as id, ${SEARCHED}, p.brand_name as brand, p.gtin,
        p.gtin || ' ' || ltrim(p.gtin, '0') as gtin_text, p.contains_allergens, p.certifications,
        p.substances, p.title_len, p.image_url
      from products p where p.id = any(${list})`)
    return rows.rows.map(({ substances, ...doc }) => ({
      ...doc,
      confident_substances: [...new Set(substances.filter((s) => s.confidence >= CONFIDENT).map((s) => s.slug))],
      substances: JSON.stringify(substances),
    }))
  }
  if (collection === 'brand') {
    const rows = await ex.execute<Document>(sql`
      select b.id::text as id, b.name, b.title_len,
        (select count(*)::int from products c where c.brand_id = b.id) as product_count
      from brands b where b.id = any(${list})`)
    return rows.rows
  }
  const rows = await ex.execute<Document>(sql`
    select r.id::text as id, r.name, r.category, r.is_active, r.is_canonical,
      coalesce(r.organization_id::text, '') as organization_id, r.is_online, r.is_physical, r.title_len, r.website
    from retailers r where r.id = any(${list})`)
  return rows.rows
}

/** Every id of a collection in id order, a page at a time after `after` (for a full reindex). */
export async function idPage(ex: Executor, collection: Collection, after: string | null, size: number) {
  const { table } = SOURCES[collection]
  const rows = await ex.execute<{ id: string }>(sql`select id::text as id from ${table}
    ${after ? sql`where id > ${after}::uuid` : sql``} order by id limit ${size}`)
  return rows.rows.map((r) => r.id)
}

export async function countRows(ex: Executor, collection: Collection): Promise<number> {
  const { table } = SOURCES[collection]
  const rows = await ex.execute<{ n: number }>(sql`select count(*)::int as n from ${table}`)
  return rows.rows[0]!.n
}
