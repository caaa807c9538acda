import { type SQL, sql } from 'drizzle-orm'
import { FIELD_COLUMNS, type ProductField, SEARCH_FIELDS } from '../catalog/fields'
import { arrayParam } from '../db/params'
import type { Executor } from '../db/tx'
import { CONFIDENT, type Collection } from './types'

/**
 * The search documents (tables `search_products`, `search_brands`, `search_retailers`, migration
 * 0024; `src/db/schema/search.ts` says what each column holds), built here from the catalog rows in
 * set-based statements: every part of a document is a `to_tsvector` computed once, and the full
 * document, the title, its keys and its length are put together from those parts.
 * - A product's document: the searchable fields of the product field list with their weights, then
 *   its brand's name (B) and its GTIN as stored and without leading zeros (A). Its title: the parts
 *   weighted A and B (name, brand, GTIN). `title_len`: the distinct words of its name and brand.
 * - A brand's document is its name (A). A retailer's: its name (A, also its title) and category (C).
 * Migration 0024 built the documents of the rows that existed then with the same SQL; a test
 * checks that the two agree.
 */

/** The SQL column of a product field (drizzle's snake_case of its property). */
export const fieldColumn = (field: ProductField) => FIELD_COLUMNS[field].replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
/** Titles of this many words or more share one tag in `title_keys` (`catalog_title_keys` in migration 0016). */
export const TITLE_BUCKETS = 16

// an empty text is an empty vector without the parser's cost (an unset field is the common case)
const vector = (expression: string, weight: string) =>
  `case when ${expression} = '' then ''::tsvector else setweight(to_tsvector('catalog'::regconfig, ${expression}), '${weight}') end`
const BRAND = `coalesce(b.name, '')`

/** A product's parts in document order (`p` the product, `b` its brand); `v.p<i>` once computed. */
const PRODUCT_PARTS = [
  ...SEARCH_FIELDS.map((f) => ({ expression: `p."${fieldColumn(f.name)}"`, weight: f.weight })),
  { expression: BRAND, weight: 'B' },
  { expression: `p.gtin::text || ' ' || ltrim(p.gtin, '0')`, weight: 'A' },
]
const part = (expression: string) => `v.p${PRODUCT_PARTS.findIndex((p) => p.expression === expression)}`
const TITLE_WEIGHTS = new Set(['A', 'B'])
const productTitle = PRODUCT_PARTS.flatMap((p, i) => (TITLE_WEIGHTS.has(p.weight) ? [`v.p${i}`] : [])).join(' || ')
// the distinct words of name and brand: their parts merged (a tsvector's length counts its lexemes)
const productTitleLen = `least(length(${part(`p."product_name"`)} || ${part(BRAND)}), 32767)::smallint`

type Build = {
  /** the document table */
  table: string
  /** the catalog table the documents are of */
  source: string
  /** the document columns besides `id`, in the order `select` gives them after the id */
  columns: string[]
  /** the documents of the rows whose id is in `$ids` (`ids`: the array parameter) */
  select: (ids: SQL) => SQL
}

const BUILDS: Record<Collection, Build> = {
  product: {
    table: 'search_products',
    source: 'products',
    columns: [
      'title_len',
      'search_vector',
      'title_vector',
      'title_keys',
      'search_text',
      'contains_allergens',
      'certifications',
      'confident_substances',
    ],
    // `offset 0`: the parts are computed once per row, not once per use
    select: (ids) => sql`select p.id, ${sql.raw(productTitleLen)},
        ${sql.raw(PRODUCT_PARTS.map((_, i) => `v.p${i}`).join(' || '))},
        ${sql.raw(productTitle)},
        catalog_title_keys(${sql.raw(productTitle)}, ${sql.raw(productTitleLen)}),
        catalog_fold(p.product_name::text || ' ' || ${sql.raw(BRAND)}::text),
        p.contains_allergens, p.certifications,
        array(select distinct s->>'slug' from jsonb_array_elements(p.substances) s
          where (s->>'confidence')::float8 >= ${sql.raw(String(CONFIDENT))} order by 1)
      from products p left join brands b on b.id = p.brand_id
        cross join lateral (select ${sql.raw(PRODUCT_PARTS.map((p, i) => `${vector(p.expression, p.weight)} as p${i}`).join(', '))}
          offset 0) v
      where p.id = any(${ids})`,
  },
  brand: {
    table: 'search_brands',
    source: 'brands',
    columns: ['title_len', 'search_vector', 'search_text'],
    select: (ids) => sql`select b.id, least(length(v.name), 32767)::smallint, v.name, catalog_fold(b.name::text)
      from brands b cross join lateral (select ${sql.raw(vector('b.name', 'A'))} as name offset 0) v
      where b.id = any(${ids})`,
  },
  retailer: {
    table: 'search_retailers',
    source: 'retailers',
    columns: [
      'organization_id',
      'is_active',
      'is_canonical',
      'title_len',
      'search_vector',
      'title_vector',
      'search_text',
    ],
    select: (ids) => sql`select r.id, r.organization_id, r.is_active, r.is_canonical,
        least(length(v.name), 32767)::smallint, v.name || v.category, v.name, catalog_fold(r.name::text)
      from retailers r cross join lateral (select ${sql.raw(vector('r.name', 'A'))} as name,
        ${sql.raw(vector('r.category', 'C'))} as category offset 0) v
      where r.id = any(${ids})`,
  },
}

const BUILDS_LIST = Object.values(BUILDS)

/** The words of the folded names in `relation` (rows with `search_text`), for typo matching. */
const words = (relation: SQL) => sql`select distinct w from ${relation} n,
    regexp_split_to_table(n.search_text, '[^[:alnum:]]+') w
  where length(w) >= 3 and w !~ '^[0-9]+$'`

/**
 * Makes the documents of these rows match them, in one statement on the executor (the caller's
 * transaction): each document built and written only when it differs from the stored one, the
 * documents of rows that no longer exist removed, and (unless `words` is false) the new names' words
 * added to `search_words` (in word order, so concurrent writers take the same locks in the same
 * order). Returns the ids of the documents written.
 */
export async function buildSearchDocuments(
  ex: Executor,
  collection: Collection,
  ids: string[],
  { words: withWords = true }: { words?: boolean } = {},
): Promise<string[]> {
  if (ids.length === 0) return []
  const { table, source, columns, select } = BUILDS[collection]
  const list = arrayParam([...new Set(ids)], 'uuid')
  const t = sql.raw(table)
  const names = sql.raw(columns.join(', '))
  const changed = sql.raw(`(${columns.map((c) => `d.${c}`).join(', ')}) is distinct from
    (${columns.map((c) => `excluded.${c}`).join(', ')})`)
  const sets = sql.raw(columns.map((c) => `${c} = excluded.${c}`).join(', '))
  const result = await ex.execute<{ id: string }>(sql`with docs as (
      insert into ${t} as d (id, ${names}) ${select(list)}
      on conflict (id) do update set ${sets} where ${changed}
      returning d.id, d.search_text),
    gone as (delete from ${t} d where d.id = any(${list})
      and not exists (select 1 from ${sql.raw(source)} e where e.id = d.id))${
        withWords
          ? sql`, words as (insert into search_words (word) ${words(sql.raw('docs'))} order by w on conflict do nothing)`
          : sql``
      }
    select id::text as id from docs`)
  return result.rows.map((r) => r.id)
}

/**
 * Adds the words of these rows' stored documents to `search_words` (the drain, after its
 * transaction: it never holds word locks while it waits for a document another writer holds).
 */
export async function addSearchWords(ex: Executor, collection: Collection, ids: string[]): Promise<void> {
  if (ids.length === 0) return
  const documents = sql`(select search_text from ${sql.raw(BUILDS[collection].table)}
    where id = any(${arrayParam(ids, 'uuid')}))`
  await ex.execute(sql`insert into search_words (word) ${words(documents)} order by w on conflict do nothing`)
}

/**
 * The whole word list again from the stored documents (`search reindex`): words no name has any
 * more go; kept words are not rewritten.
 */
export async function rebuildSearchWords(ex: Executor): Promise<void> {
  const names = BUILDS_LIST.map((b) => `select search_text from ${b.table}`).join(' union all ')
  await ex.execute(sql`with present as materialized (${words(sql.raw(`(${names})`))}),
    stale as (delete from search_words s where not exists (select 1 from present p where p.w = s.word))
    insert into search_words (word) select w from present order by w on conflict do nothing`)
}

/**
 * Removes the documents whose row is gone (`search reindex`; the writers remove a document when
 * they rebuild the id of a row that no longer exists).
 */
export async function removeOrphanDocuments(ex: Executor): Promise<void> {
  for (const { table, source } of BUILDS_LIST)
    await ex.execute(
      sql`delete from ${sql.raw(table)} d where not exists (select 1 from ${sql.raw(source)} e where e.id = d.id)`,
    )
}

/** The catalog table of a collection (for pages of ids). */
export const sourceTable = (collection: Collection) => BUILDS[collection].source
