import { type SQL, sql } from 'drizzle-orm'
import type { Executor } from '../db/tx'
import { TITLE_BUCKETS } from './documents'
import type { ParsedQuery, Term } from './query'
import { bodyRank, titleRank } from './rank'
import { commonLexemes, rareInProducts } from './rare'
import {
  countOf,
  fetchParts,
  flagPart,
  type Match,
  type Part,
  type RawRow,
  type Stage,
  type Statement,
  toRow,
} from './rows'
import { filterShape, SOURCES, type Source } from './sources'
import { type Session, type Values, value, withSession } from './statements'
import { excluded, fuzzyPrelude, once, positive, shapeOf, valuesOf } from './terms'
import type { SearchInput, SearchRow } from './types'

/**
 * Catalog search on PostgreSQL, in tiers; each tier runs only when the ones before found nothing:
 * 1. `gtin`: a query that is a GTIN is looked up exactly and ranked above every text match;
 * 2. `fulltext`: the tsquery of the parsed query, first over titles (name, brand, GTIN), then, for a
 *    collection whose titles gave fewer than `limit` rows, over the rest of the document;
 * 3. `substring`: every positive term a case- and accent-insensitive substring of the folded name;
 *    skipped when a clause of letters is in no word of the catalog's names (`noSubstring`), which
 *    the full-text statement tells along with its hits: a typo costs two statements, not three;
 * 4. `fuzzy`: each word replaced by the most alike words of the catalog's names (`search_words`,
 *    trigram similarity), then searched as in 2, corrections and search in one statement; never
 *    for codes or phrases.
 * Filters apply in every tier. Ranks are in `rank.ts`; rows of equal rank keep the order they were
 * found in (below).
 *
 * Speed: a round trip finds every selected collection's hits of a stage together with their rows'
 * fields (`fetchParts`), so a common query is one statement, built once per shape of query
 * (`shapeOf` in `terms.ts`), the words and filters entering as placeholders (`valuesOf`,
 * `statements.ts`). Hits come in rank order, so a common word stops after `limit` hits without
 * ranking every match:
 * - product titles by title length through `title_keys`, one length after the other (`productTitles`),
 *   equal lengths in storage order;
 * - everything else by (title length, id) from a covering index holding each title and folded name,
 *   walked for at most `WINDOW` entries; when the walk yields fewer than `limit` rows the query is
 *   rare, and the GIN (full text) or trigram (substring) index finds all its rows, sorted afterwards.
 */

/**
 * How many entries of a covering index a walk reads before the GIN index takes over: titles of
 * brands and retailers (and their substrings), product substrings, and documents, whose walk tests
 * each entry against the table row.
 */
const WINDOW = { title: 500, substring: 5_000, body: 1_000 }

/** A condition on a row's title tsvector and folded name, both in the covering index. */
type OnIndex = (title: SQL, text: SQL) => SQL
type Where = { onIndex: OnIndex | null; onRow: SQL | null }

const and = (...parts: (SQL | null)[]) => {
  const present = parts.filter((c): c is SQL => c !== null)
  return present.length > 0 ? sql.join(present, sql` and `) : null
}
/** The request's `limit`: how many rows a search returns, and each part finds at most. */
const LIMIT = value('limit')
const numbered = (select: SQL, order: string, gate: SQL | null = null) =>
  sql`select id, title_len, row_number() over (order by ${sql.raw(order)}) as n from (${select}) o${gate ? sql` where ${gate}` : sql``}`

/**
 * The first `limit` rows of a collection in title order (title_len, id) meeting `onIndex` (tested
 * in the index) and `onRow` (tested on the table row, alias `h`); one statement, walking `window`
 * entries first (0: none), the GIN fallback running only when the walk came short.
 */
function inTitleOrder(source: Source, where: Where, window: number, rare: SQL | null = null): SQL {
  const { table } = source
  const title = sql.raw(source.title)
  const all = and(where.onIndex ? where.onIndex(sql`h.${title}`, sql.raw('h.search_text')) : null, where.onRow)!
  // every row that matches, from the GIN indexes, then sorted (`+ 0`: not walked in order)
  const found = sql`select h.id, h.title_len from ${table} h where ${all} order by h.title_len + 0, h.id limit ${LIMIT}`
  if (window === 0) return numbered(found, 'title_len, id')
  // a small collection's GIN index says first whether any title matches (a one-time filter); not
  // `exists`, which the planner answers by walking the covering index until a row matches (all of
  // it when none does), but a count of a few rows, which it takes from the GIN index's bitmap
  const gate =
    source.askFirst && where.onIndex
      ? sql`(select count(*) from (select from ${table} h
          where ${where.onIndex(sql`h.${title}`, sql.raw('h.search_text'))} limit 10) a) > 0`
      : null
  const walked = and(
    where.onIndex ? where.onIndex(sql.raw('s.title'), sql.raw('s.search_text')) : null,
    where.onRow ? sql`exists (select 1 from ${table} h where h.id = s.id and ${where.onRow})` : null,
  )!
  // the GIN indexes only when the walk came short, or without the walk when the query is known to be rare
  const walk = rare ? sql` where not ${rare}::boolean` : sql``
  return numbered(
    sql`with w as materialized (select s.id, s.title_len
        from (select id, title_len, ${title} as title, search_text from ${table}${walk} order by title_len, id limit ${window}) s
        where ${walked} order by s.title_len, s.id limit ${LIMIT})
      select id, title_len from w where (select count(*) from w) = ${LIMIT}
      union all
      select * from (${found}) f where (select count(*) from w) < ${LIMIT}`,
    'title_len, id',
    gate,
  )
}

/**
 * Product title matches in rank order (title length, then storage order): the titles of each length
 * below TITLE_BUCKETS in turn, each length one GIN lookup of the query's words tagged with it
 * (`catalog_title_query`), so a common word stops at the first titles and a phrase of long titles
 * skips the short ones without visiting them; then the longer titles, sorted. `title_vector`
 * rechecks what the tags cannot (phrases, exclusions) and `onRow` the filters, on the rows taken.
 */
function productTitles(pos: SQL, query: SQL, onRow: SQL | null): SQL {
  const where = (len: SQL) =>
    and(sql`h.title_keys @@ catalog_title_query(${pos}, ${len})`, sql`h.title_vector @@ ${query}`, onRow)
  return numbered(
    sql`(select h.id, h.title_len, h.ctid from generate_series(0, ${sql.raw(String(TITLE_BUCKETS - 1))}) b(len)
        cross join lateral (select h.id, h.title_len, h.ctid from search_products h where ${where(sql`b.len`)} limit ${LIMIT}) h
        limit ${LIMIT})
      union all
      (select h.id, h.title_len, h.ctid from search_products h where ${where(sql.raw(String(TITLE_BUCKETS)))}
        order by h.title_len, h.ctid limit ${LIMIT})
      limit ${LIMIT}`,
    'title_len, ctid',
  )
}

type Found = { raw: RawRow; rank: number }

const RANKS: Record<Stage, (titleLength: number) => number> = { gtin: () => 1, title: titleRank, body: bodyRank }

/**
 * The hits of a statement (`key`, built by `build` the first time) with their rows, ranked, in rank
 * order (equal ranks: part order, then found order); `flagged` as `fetchParts` tells it.
 */
async function findFlagged(
  ex: Session,
  key: string,
  build: () => Statement,
  values: Values,
): Promise<{ found: Found[]; flagged: boolean }> {
  const { rows, flagged } = await fetchParts(ex, key, build, values)
  const found = rows
    .map((raw) => ({ raw, rank: RANKS[raw.stage](raw.title_len) * raw.weight }))
    .sort((a, b) => b.rank - a.rank || a.raw.part - b.raw.part || a.raw.n - b.raw.n)
  return { found, flagged }
}

const find = async (ex: Session, key: string, build: () => Statement, values: Values) =>
  (await findFlagged(ex, key, build, values)).found

/**
 * One search as its tiers take it: where its statements run, the query, and what every statement
 * of it shares, worked out once: the placeholders' values and the query's shape (`terms.ts`).
 */
type Search = { ex: Session; p: ParsedQuery; input: SearchInput; values: Values; shape: string }

/**
 * Full-text hits of the selected collections: titles, then the rest of the documents where titles
 * came short. When they found nothing, the same statement also tells whether the substring tier
 * can find anything (`noSubstring`): a typo then skips the substring statement.
 */
async function fulltext(search: Search): Promise<{ found: Found[]; substrings: boolean }> {
  const { ex, p, input, values, shape } = search
  const none = noSubstring(p)
  const { found, flagged } = await findFlagged(
    ex,
    `fulltext|${shape}|${none ? lettersKey(p) : ''}`,
    () => {
      const parts = fulltextParts(p, input, { pos: positive(p), match: 'fulltext' })
      if (!none) return { parts }
      const nothing = sql.join(
        parts.map((_, i) => countOf(i)),
        sql` + `,
      )
      // flagged when full text found nothing and substrings cannot be found either
      return { parts: [...parts, flagPart(sql`case when ${nothing} = 0 then ${none} else false end`)] }
    },
    values,
  )
  return { found, substrings: !flagged }
}

/**
 * How full-text parts are made (the first parts of their statement): `pos` the tsquery of the
 * positive clauses, `match` their tier, `when` and `weight` set on every one.
 */
type FulltextOptions = { pos: SQL; match: Match; when?: SQL; weight?: SQL }

function fulltextParts(p: ParsedQuery, input: SearchInput, o: FulltextOptions): Part[] {
  const { pos, match, weight } = o
  const neg = excluded(p)
  const query = neg ? sql`(${pos} && !! ${neg})` : pos
  const sources = input.types.map((c) => SOURCES[c])
  const notInDocument = (s: Source) => (neg && s.document ? sql`not (h.${sql.raw(s.document)} @@ ${neg})` : null)
  const titles: Part[] = sources.map((s) => ({
    type: s.collection,
    stage: 'title',
    match,
    weight,
    when: o.when,
    select:
      s.collection === 'product'
        ? productTitles(pos, query, and(notInDocument(s), s.row(input)))
        : inTitleOrder(
            s,
            { onIndex: (title) => sql`${title} @@ ${query}`, onRow: and(notInDocument(s), s.row(input)) },
            walkFor(p, WINDOW.title),
          ),
  }))
  // the rest of a document only where its titles came short: in the same statement, started only then
  const bodies: Part[] = sources.flatMap((s, i) => {
    if (!s.document) return []
    const document = sql.raw(`h.${s.document}`)
    const onRow = and(sql`${document} @@ ${query} and not (h.${sql.raw(s.title)} @@ ${pos})`, s.row(input))
    // a small collection's documents straight from the GIN index; a product's walked first, unless
    // its statistics tell the query is rare (rare.ts; the typo tier's corrected words are the catalog's)
    const product = s.collection === 'product'
    const window = product ? walkFor(p, WINDOW.body) : 0
    const rare = product && match === 'fulltext' ? value('rare') : null
    return [
      {
        type: s.collection,
        stage: 'body',
        match,
        weight,
        select: inTitleOrder(s, { onIndex: null, onRow }, window, rare),
        when: and(o.when ?? null, sql`${countOf(i)} < ${LIMIT}`)!,
      },
    ]
  })
  return [...titles, ...bodies]
}

/**
 * Whether a term is a word of letters a-z only: such a term is a substring of a folded name only
 * inside one of the name's words, so only when it is a substring of one of `search_words`.
 */
const LETTERS = /^[a-z]+$/i
const lettersOnly = (clause: Term[]) => clause.every((t) => LETTERS.test(t.text))

/** Whether every clause of letters only is a substring of some word of the catalog's names. */
function inSomeWord(p: ParsedQuery): SQL | null {
  const clauses = p.clauses.flatMap((clause, c) => {
    if (!lettersOnly(clause)) return []
    const terms = clause.map(
      (_, i) =>
        sql`exists (select 1 from search_words w where w.word like ${once(sql`catalog_fold(${value(`l${c}_${i}`)})`)})`,
    )
    return [sql`(${sql.join(terms, sql` or `)})`]
  })
  return clauses.length > 0 ? sql.join(clauses, sql` and `) : null
}

/**
 * Substring hits: every clause a substring of the folded name, no excluded term in it. Asked only
 * when the full-text statement found that they may exist (`noSubstring`), so a typo, a substring of
 * nothing, does not walk names.
 */
function substringParts(p: ParsedQuery, input: SearchInput): Part[] {
  const contains = (text: SQL, name: string) => sql`${text} like ${once(sql`catalog_fold(${value(name)})`)}`
  const onIndex: OnIndex = (_, text) =>
    sql.join(
      [
        ...p.clauses.map(
          (clause, c) =>
            sql`(${sql.join(
              clause.map((_, i) => contains(text, `l${c}_${i}`)),
              sql` or `,
            )})`,
        ),
        ...p.excluded.map((_, i) => sql`not ${contains(text, `lx${i}`)}`),
      ],
      sql` and `,
    )
  return input.types.map((c) => ({
    type: c,
    stage: 'title',
    match: 'substring',
    select: inTitleOrder(
      SOURCES[c],
      { onIndex, onRow: SOURCES[c].row(input) },
      walkFor(p, c === 'product' ? WINDOW.substring : WINDOW.title),
    ),
  }))
}

const hasSubstring = (p: ParsedQuery) => p.clauses.some((c) => c.every((t) => t.text.length >= 3))
/** Which clauses are letters only (`lettersOnly`): part of the key of a statement using `inSomeWord`. */
const lettersKey = (p: ParsedQuery) => p.clauses.map((c) => (lettersOnly(c) ? 1 : 0)).join('')

/**
 * A condition on the query alone that holds when the substring tier cannot find anything: a clause
 * of letters in no word of the catalog's names. Null when only the substring statement can tell, or
 * when that tier does not run (no clause long enough).
 */
function noSubstring(p: ParsedQuery): SQL | null {
  if (!hasSubstring(p)) return null
  const some = inSomeWord(p)
  return some ? sql`not (${some})` : null
}
const hasFuzzy = (p: ParsedQuery) => !p.code && !p.clauses.some((c) => c.some((t) => t.phrase))

/** Substring hits (`substringParts`), one statement; null when no clause has a term long enough. */
function substring({ ex, p, input, values, shape }: Search): Promise<Found[]> | null {
  if (!hasSubstring(p)) return null
  return find(ex, `substring|${shape}`, () => ({ parts: substringParts(p, input) }), values)
}

/**
 * Typo hits: full text of the corrected query (`fuzzyPrelude`), ranked by how alike the corrections
 * are, in one statement with the corrections; null for codes and phrases.
 */
function fuzzy({ ex, p, input, values, shape }: Search): Promise<Found[]> | null {
  if (!hasFuzzy(p)) return null
  return find(
    ex,
    `fuzzy|${shape}`,
    () => ({
      prelude: fuzzyPrelude(p),
      parts: fulltextParts(p, input, {
        pos: sql`(select q from fuzzy)`,
        match: 'fuzzy',
        when: sql`(select q from fuzzy) is not null`,
        weight: sql`(select likeness from fuzzy)`,
      }),
    }),
    values,
  )
}

/** A code (digits) is rare in any collection: no walk, the GIN index finds it. */
const walkFor = (p: ParsedQuery, window: number) => (p.code ? 0 : window)

/** Whether the query is a GTIN to look up exactly: it is one, and products are searched. */
const exactGtin = (p: ParsedQuery, input: SearchInput) => p.gtin !== null && input.types.includes('product')

export async function searchPostgres(ex: Executor, input: SearchInput, p: ParsedQuery): Promise<SearchRow[]> {
  // nothing to search for (only punctuation or exclusions): no connection taken
  if (p.clauses.length === 0 && !exactGtin(p, input)) return []
  const [values, shape] = [valuesOf(p, input), shapeOf(p, input)]
  values.rare = rareInProducts(p, commonLexemes())
  return withSession(ex, (session) => searchIn({ ex: session, p, input, values, shape }))
}

async function searchIn(search: Search): Promise<SearchRow[]> {
  const { ex, p, input } = search
  const rows: SearchRow[] = []
  if (exactGtin(p, input)) {
    const exact = await find(
      ex,
      `gtin|${filterShape(input)}`,
      () => {
        const filters = SOURCES.product.row(input)
        return {
          parts: [
            {
              type: 'product',
              stage: 'gtin',
              match: 'gtin',
              // the product by its unique GTIN, its document by id
              select: sql`select h.id, h.title_len, 1 as n from products g join search_products h on h.id = g.id
              where g.gtin = ${value('gtin')}${filters ? sql` and ${filters}` : sql``}`,
            },
          ],
        }
      },
      search.values,
    )
    rows.push(...exact.map((f) => toRow(f.raw, f.rank, input)))
    // a code that is a GTIN and found: its product is the answer (text tiers would find it again)
    if (p.code && rows.length > 0) return rows
  }
  if (p.clauses.length === 0) return rows
  // each tier only when the ones before found nothing; found in rank order
  let { found, substrings } = await fulltext(search)
  if (found.length === 0 && substrings) found = (await substring(search)) ?? []
  if (found.length === 0) found = (await fuzzy(search)) ?? []
  const seen = new Set(rows.map((r) => r.id))
  for (const f of found.slice(0, input.limit)) {
    const row = toRow(f.raw, f.rank, input)
    if (!seen.has(row.id)) rows.push(row)
  }
  return rows.slice(0, input.limit)
}
