import { type SQL, sql } from 'drizzle-orm'
import type { SubstanceMatch } from '../db/schema'
import { type Executor, inTransaction } from '../db/tx'
import { toShortId } from '../shared/ids'
import { type ParsedQuery, positiveText, type Term } from './query'
import { CONFIDENT, type SearchInput, type SearchRow } from './types'

/**
 * Catalog search on PostgreSQL, in tiers; each tier runs only when the ones before found nothing:
 * 1. `gtin`: a query that is a GTIN is looked up exactly and ranked above every text match;
 * 2. `fulltext`: the tsquery of the parsed query over the `search_vector` documents, ranked by
 *    ts_rank (weights A-D, length-normalised, scaled into 0-1);
 * 3. `substring`: every positive term a case- and accent-insensitive substring of the folded name
 *    (trigram index; a term of 3 characters or more is needed for the index, else the tier is skipped);
 * 4. `fuzzy`: trigram word similarity of the positive words to the folded name (typos), never for codes.
 * Filters apply in every tier. The selected collections are searched in one statement, merged by
 * rank and cut to `limit`.
 */

type Tier = 'fulltext' | 'substring' | 'fuzzy'
type Match = { where: (document: SQL, text: SQL) => SQL; rank: (document: SQL, text: SQL) => SQL }

const tsTerm = (t: Term) =>
  t.prefix ? sql`to_tsquery('catalog', ${`${t.text}:*`})` : sql`phraseto_tsquery('catalog', ${t.text})`

function tsquery(p: ParsedQuery): SQL {
  const parts = [
    ...p.clauses.map((c) => sql`(${sql.join(c.map(tsTerm), sql` || `)})`),
    ...p.excluded.map((t) => sql`(!! ${tsTerm(t)})`),
  ]
  return sql`(${sql.join(parts, sql` && `)})`
}

const like = (t: Term) => `%${t.text.replace(/[\\%_]/g, '\\$&')}%`
const contains = (text: SQL, t: Term) => sql`${text} like catalog_fold(${like(t)})`
const notExcluded = (p: ParsedQuery, text: SQL) =>
  p.excluded.length === 0
    ? sql`true`
    : sql`not (${sql.join(
        p.excluded.map((t) => contains(text, t)),
        sql` or `,
      )})`

function match(tier: Tier, p: ParsedQuery): Match | null {
  if (tier === 'fulltext') {
    const q = tsquery(p)
    return {
      where: (document) => sql`${document} @@ ${q}`,
      rank: (document) => sql`ts_rank(${document}, ${q}, 33)`,
    }
  }
  if (tier === 'substring') {
    if (!p.clauses.some((c) => c.every((t) => t.text.length >= 3))) return null
    const all = (text: SQL) =>
      sql.join(
        p.clauses.map(
          (c) =>
            sql`(${sql.join(
              c.map((t) => contains(text, t)),
              sql` or `,
            )})`,
        ),
        sql` and `,
      )
    const words = positiveText(p)
    return {
      where: (_, text) => sql`${all(text)} and ${notExcluded(p, text)}`,
      rank: (_, text) => sql`similarity(catalog_fold(${words}), ${text})`,
    }
  }
  // typos, not reordering: a digit-only query (a code) or a quoted phrase is never matched by similarity
  if (p.code || p.clauses.some((c) => c.some((t) => t.phrase))) return null
  // every clause by one of its words, each word alike to a word of the name; words under 3
  // characters carry no trigram and are left out
  const clauses = p.clauses.map((c) => c.filter((t) => t.text.length >= 3)).filter((c) => c.length > 0)
  if (clauses.length === 0) return null
  const alike = (text: SQL, t: Term) => sql`catalog_fold(${t.text}) <% ${text}`
  const score = (text: SQL, t: Term) => sql`word_similarity(catalog_fold(${t.text}), ${text})`
  return {
    where: (_, text) =>
      sql`${sql.join(
        clauses.map(
          (c) =>
            sql`(${sql.join(
              c.map((t) => alike(text, t)),
              sql` or `,
            )})`,
        ),
        sql` and `,
      )} and ${notExcluded(p, text)}`,
    rank: (_, text) =>
      sql`(${sql.join(
        clauses.map(
          (c) =>
            sql`greatest(${sql.join(
              c.map((t) => score(text, t)),
              sql`, `,
            )})`,
        ),
        sql` + `,
      )}) / ${clauses.length}`,
  }
}

function productFilters(input: SearchInput): SQL {
  const parts: SQL[] = [sql`true`]
  if (input.excludeAllergens.length > 0)
    parts.push(sql`not (p.contains_allergens && ${toArray(input.excludeAllergens)})`)
  if (input.certifications.length > 0) parts.push(sql`p.certifications @> ${toArray(input.certifications)}`)
  if (input.excludeSubstances.length > 0)
    parts.push(sql`not exists (select 1 from jsonb_array_elements(p.substances) s
      where s->>'slug' = any(${toArray(input.excludeSubstances)}) and (s->>'confidence')::float8 >= ${CONFIDENT})`)
  return sql.join(parts, sql` and `)
}

// one array parameter (drizzle would spread a bare array into a list of parameters)
const toArray = (values: string[]) => sql`${sql.param(values)}::text[]`

/** The ids and ranks of one collection's best `limit` hits. */
function hits(collection: SearchRow['type'], m: Match, input: SearchInput): SQL {
  const limit = input.limit
  if (collection === 'product') {
    const [d, t] = [sql`p.search_vector`, sql`p.search_text`]
    return sql`(select 'product'::text as type, p.id, ${m.rank(d, t)}::float8 as rank from products p
      where ${m.where(d, t)} and ${productFilters(input)} order by 3 desc, p.id limit ${limit})`
  }
  if (collection === 'brand') {
    const [d, t] = [sql`b.search_vector`, sql`b.search_text`]
    return sql`(select 'brand'::text as type, b.id, ${m.rank(d, t)}::float8 as rank from brands b
      where ${m.where(d, t)} order by 3 desc, b.id limit ${limit})`
  }
  const [d, t] = [sql`r.search_vector`, sql`r.search_text`]
  const visible = input.organizationId
    ? sql`(r.is_canonical or r.organization_id = ${input.organizationId})`
    : sql`r.is_canonical`
  return sql`(select 'retailer'::text as type, r.id, ${m.rank(d, t)}::float8 as rank from retailers r
    where ${m.where(d, t)} and r.is_active and ${visible} order by 3 desc, r.id limit ${limit})`
}

type RawRow = {
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

/** The merged, ranked rows of `selected` (a union of per-collection hits) with their fields. */
async function rowsOf(ex: Executor, selected: SQL, limit: number): Promise<RawRow[]> {
  const result =
    await ex.execute<RawRow>(sql`with hits as (select * from (${selected}) u order by rank desc, id limit ${limit})
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

function toRow(raw: RawRow, match: SearchRow['match'], input: SearchInput): SearchRow {
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

export async function searchPostgres(ex: Executor, input: SearchInput, p: ParsedQuery): Promise<SearchRow[]> {
  const rows: SearchRow[] = []
  if (p.gtin && input.types.includes('product')) {
    const exact = sql`(select 'product'::text as type, p.id, 1::float8 as rank from products p
      where p.gtin = ${p.gtin} and ${productFilters(input)})`
    rows.push(...(await rowsOf(ex, exact, 1)).map((r) => toRow(r, 'gtin', input)))
  }
  if (p.clauses.length === 0) return rows
  const seen = new Set(rows.map((r) => r.id))
  for (const tier of ['fulltext', 'substring', 'fuzzy'] as const) {
    const m = match(tier, p)
    if (!m) continue
    const union = sql.join(
      input.types.map((c) => hits(c, m, input)),
      sql` union all `,
    )
    const found =
      tier === 'fuzzy'
        ? await inTransaction(ex, async (tx) => {
            await tx.execute(sql`select set_config('pg_trgm.word_similarity_threshold', '0.5', true)`)
            return rowsOf(tx, union, input.limit)
          })
        : await rowsOf(ex, union, input.limit)
    if (found.length === 0 && rows.length === 0) continue
    for (const r of found) if (!seen.has(toShortId(r.id))) rows.push(toRow(r, tier, input))
    break
  }
  return rows.slice(0, input.limit)
}
