import { type SQL, sql } from 'drizzle-orm'
import type { SubstanceMatch } from '../db/schema'
import { toShortId } from '../shared/ids'
import { run, type Session, type Values } from './statements'
import { CONFIDENT, type Collection, type SearchInput, type SearchRow } from './types'

/** Where a hit was found, which sets its rank: the exact GTIN, a title, or the rest of a document. */
export type Stage = 'gtin' | 'title' | 'body'

/**
 * One collection's hits of one stage of a search: `select` gives `id`, `title_len` and `n`, the
 * hit's place in the part's order (1 first). `when`: a condition on the query alone (a one-time
 * filter: the part does not start unless it holds); it may count an earlier part's hits, as
 * `countOf(i)` does.
 */
export type Part = {
  type: Collection
  stage: Stage
  /** the tier the part belongs to, which each of its rows names */
  match: Match
  select: SQL
  when?: SQL
  /** a factor on the rank of the part's rows, a scalar of the statement (typo matches: how alike) */
  weight?: SQL
}
export type Match = SearchRow['match']

/** A statement's parts, after CTEs they may refer to (`prelude`: definitions, without `with`). */
export type Statement = { parts: Part[]; prelude?: SQL }

/** How many hits the part at index `i` of the same statement found. */
export const countOf = (i: number) => sql`(select count(*) from ${sql.raw(`p${i}`)})`

export type RawRow = {
  /** the index of the part the hit came from */
  part: number
  type: Collection
  stage: Stage
  match: Match
  /** the part's `weight` (1 without one) */
  weight: number
  id: string
  title_len: number
  n: number
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

/**
 * A part of no hits that yields one row (without an id) when `when`, a condition on the query alone,
 * holds: how a statement tells its caller something besides its hits (`Fetched.flagged`).
 */
export const flagPart = (when: SQL): Part => ({
  type: 'product',
  stage: 'title',
  match: 'fulltext',
  select: sql`select null::uuid as id, 0 as title_len, 1 as n`,
  when,
})

/** A statement's hits, and whether one of its `flagPart`s yielded its row. */
export type Fetched = { rows: RawRow[]; flagged: boolean }

/**
 * Every part's hits with the fields of their rows, in one statement (one round trip): the statement
 * of `key`, built by `build` the first time (`run`), with `values` (`limit` among them).
 */
export async function fetchParts(
  session: Session,
  key: string,
  build: () => Statement,
  values: Values,
): Promise<Fetched> {
  const all = await run<Omit<RawRow, 'id'> & { id: string | null }>(session, key, () => partsStatement(build()), values)
  const rows = all.filter((r): r is RawRow => r.id !== null)
  return { rows, flagged: rows.length < all.length }
}

function partsStatement({ parts, prelude }: Statement): SQL {
  // each part a CTE, so a later part can run only when an earlier one came short (a one-time filter:
  // the plan does not start it otherwise)
  const ctes = sql.join(
    parts.map((p, i) => {
      const gate = p.when ? sql` where ${p.when}` : sql``
      return sql`${sql.raw(`p${i}`)} as materialized (select * from (${p.select}) x${gate})`
    }),
    sql`, `,
  )
  const hits = sql.join(
    parts.map(
      (p, i) =>
        sql`select ${sql.raw(`'${p.type}'::text as type, '${p.stage}'::text as stage, '${p.match}'::text as match`)},
          ${p.weight ?? sql.raw('1')}::float8 as weight, ${sql.raw(`${i} as part, id, title_len, n from p${i}`)}`,
    ),
    sql` union all `,
  )
  // lateral lookups, each hit's row by primary key whatever the plan thinks of the hits' number
  // (`limit 1` keeps each a subquery: pulled up, a join could hash a whole table)
  return sql`with ${prelude ? sql`${prelude}, ` : sql``}${ctes} select h.part, h.type, h.stage, h.match, h.weight,
      h.id, h.title_len::int, h.n::int,
      p.product_name, p.gtin, p.brand_name, p.image_url, p.contains_allergens, p.certifications, p.substances,
      b.name as brand, b.product_count, r.name as retailer, r.website, r.is_online, r.is_physical
    from (${hits}) h
      left join lateral (select p.*, coalesce(pb.name, '') as brand_name from products p
        left join brands pb on pb.id = p.brand_id where h.type = 'product' and p.id = h.id limit 1) p on true
      left join lateral (select b.name, (select count(*)::int from products c where c.brand_id = b.id) as product_count
        from brands b where h.type = 'brand' and b.id = h.id limit 1) b on true
      left join lateral (select * from retailers r where h.type = 'retailer' and r.id = h.id limit 1) r on true`
}

export function toRow(raw: RawRow, rank: number, input: SearchInput): SearchRow {
  const base = { id: toShortId(raw.id), rank: Math.round(rank * 1e6) / 1e6, match: raw.match }
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
