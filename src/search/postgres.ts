import { type SQL, sql } from 'drizzle-orm'
import type { Executor } from '../db/tx'
import type { ParsedQuery, Term } from './query'
import { bodyRank, titleRank } from './rank'
import { rowsOf, toRow } from './rows'
import { SOURCES, type Source } from './sources'
import type { SearchInput, SearchRow } from './types'

/**
 * Catalog search on PostgreSQL, in tiers; each tier runs only when the ones before found nothing:
 * 1. `gtin`: a query that is a GTIN is looked up exactly and ranked above every text match;
 * 2. `fulltext`: the tsquery of the parsed query, first over titles (name, brand, GTIN), then, for a
 *    collection whose titles gave fewer than `limit` rows, over the rest of the document;
 * 3. `substring`: every positive term a case- and accent-insensitive substring of the folded name;
 * 4. `fuzzy`: each word replaced by the most alike words of the catalog's names (`search_words`,
 *    trigram similarity), then searched as in 2; never for codes or phrases.
 * Filters apply in every tier. Ranks are in `rank.ts`.
 *
 * Speed: rows come in rank order (title length, then id) from a covering index holding each title
 * and folded name, so a common word stops after `limit` hits without ranking every match. The walk
 * is bounded (`WINDOW` entries); when it yields fewer than `limit` rows the query is rare, and the
 * GIN (full text) or trigram (substring) index finds all its rows, sorted afterwards. Both give the
 * same rows: the walk is exact for what it returns.
 */

const WINDOW = 20_000
/** the document stage tests each entry against the table row: a shorter walk */
const BODY_WINDOW = 1_000

type Hit = { type: SearchRow['type']; id: string; rank: number }
type Entry = { id: string; title_len: number }
/** A condition on a row's title tsvector and folded name, both in the covering index. */
type OnIndex = (title: SQL, text: SQL) => SQL

/**
 * The first `limit` rows of a collection in title order (title_len, id) meeting `onIndex` (tested
 * in the index) and `onRow` (tested on the table row, alias `h`).
 */
async function inTitleOrder(
  ex: Executor,
  source: Source,
  where: { onIndex: OnIndex | null; onRow: SQL | null },
  limit: number,
  window: number,
): Promise<Entry[]> {
  const { table } = source
  const title = sql.raw(source.title)
  const hTitle = sql`h.${title}`
  const all = [where.onIndex ? where.onIndex(hTitle, sql.raw('h.search_text')) : null, where.onRow].filter(
    (c): c is SQL => c !== null,
  )
  if (!source.walk) {
    // a small collection: the planner picks between the ordered index and the GIN index + sort
    const found = await ex.execute<Entry>(sql`select h.id, h.title_len from ${table} h
      where ${sql.join(all, sql` and `)} order by h.title_len, h.id limit ${limit}`)
    return found.rows
  }
  const [sTitle, sText] = [sql.raw('s.title'), sql.raw('s.search_text')]
  const conditions = [
    where.onIndex ? where.onIndex(sTitle, sText) : null,
    where.onRow ? sql`exists (select 1 from ${table} h where h.id = s.id and ${where.onRow})` : null,
  ].filter((c): c is SQL => c !== null)
  const walked = await ex.execute<Entry>(sql`select s.id, s.title_len
    from (select id, title_len, ${title} as title, search_text from ${table} order by title_len, id limit ${window}) s
    where ${sql.join(conditions, sql` and `)} order by s.title_len, s.id limit ${limit}`)
  if (walked.rows.length === limit) return walked.rows
  // rare: every row that matches, from the GIN indexes, then sorted (`+ 0`: not walked in order)
  const found = await ex.execute<Entry>(sql`select h.id, h.title_len from ${table} h
    where ${sql.join(all, sql` and `)} order by h.title_len + 0, h.id limit ${limit}`)
  return found.rows
}

const tsTerm = (t: Term) =>
  t.prefix ? sql`to_tsquery('catalog', ${`${t.text}:*`})` : sql`phraseto_tsquery('catalog', ${t.text})`
const positive = (p: ParsedQuery) =>
  sql`(${sql.join(
    p.clauses.map((c) => sql`(${sql.join(c.map(tsTerm), sql` || `)})`),
    sql` && `,
  )})`
const excluded = (p: ParsedQuery) =>
  p.excluded.length > 0 ? sql`(${sql.join(p.excluded.map(tsTerm), sql` || `)})` : null
const and = (...parts: (SQL | null)[]) => {
  const present = parts.filter((c): c is SQL => c !== null)
  return present.length > 0 ? sql.join(present, sql` and `) : null
}

/** Full-text hits of one collection: title matches, then (when short) the rest of the document. */
async function fulltext(ex: Executor, source: Source, p: ParsedQuery, input: SearchInput): Promise<Hit[]> {
  const [pos, neg] = [positive(p), excluded(p)]
  const query = neg ? sql`(${pos} && !! ${neg})` : pos
  const notInDocument = neg && source.document ? sql`not (h.${sql.raw(source.document)} @@ ${neg})` : null
  const rowConditions = source.row(input)
  const titled = await inTitleOrder(
    ex,
    source,
    { onIndex: (title) => sql`${title} @@ ${query}`, onRow: and(notInDocument, rowConditions) },
    input.limit,
    WINDOW,
  )
  const hits = titled.map((e) => ({ type: source.collection, id: e.id, rank: titleRank(e.title_len) }))
  if (hits.length === input.limit || !source.document) return hits
  const document = sql.raw(`h.${source.document}`)
  const inBody = await inTitleOrder(
    ex,
    source,
    {
      onIndex: null,
      onRow: and(sql`${document} @@ ${query} and not (h.${sql.raw(source.title)} @@ ${pos})`, rowConditions),
    },
    input.limit - hits.length,
    BODY_WINDOW,
  )
  return [...hits, ...inBody.map((e) => ({ type: source.collection, id: e.id, rank: bodyRank(e.title_len) }))]
}

const likeText = (t: Term) => `%${t.text.replace(/[\\%_]/g, '\\$&')}%`

/** Substring hits: every clause a substring of the folded name, no excluded term in it. */
async function substring(ex: Executor, source: Source, p: ParsedQuery, input: SearchInput): Promise<Hit[]> {
  const contains = (text: SQL, t: Term) => sql`${text} like catalog_fold(${likeText(t)})`
  const onIndex: OnIndex = (_, text) =>
    sql.join(
      [
        ...p.clauses.map(
          (c) =>
            sql`(${sql.join(
              c.map((t) => contains(text, t)),
              sql` or `,
            )})`,
        ),
        ...p.excluded.map((t) => sql`not ${contains(text, t)}`),
      ],
      sql` and `,
    )
  const entries = await inTitleOrder(ex, source, { onIndex, onRow: source.row(input) }, input.limit, WINDOW)
  return entries.map((e) => ({ type: source.collection, id: e.id, rank: titleRank(e.title_len) }))
}

/**
 * The query with each word of 3 characters or more replaced by the catalog's most alike words (up to
 * three, trigram similarity 0.3 or more), and how alike the least alike clause's best word is; null
 * when a clause has no alike word, or the query is a code or has a phrase.
 */
async function corrected(ex: Executor, p: ParsedQuery): Promise<{ query: ParsedQuery; likeness: number } | null> {
  if (p.code || p.clauses.some((c) => c.some((t) => t.phrase))) return null
  let likeness = 1
  const clauses: Term[][] = []
  for (const clause of p.clauses) {
    const terms: Term[] = []
    let best = 0
    for (const t of clause) {
      if (t.text.length < 3) {
        terms.push(t)
        best = 1
        continue
      }
      const alike = await ex.execute<{ word: string; likeness: number }>(sql`select word,
          similarity(word, catalog_fold(${t.text}))::float8 as likeness
        from search_words where word % catalog_fold(${t.text}) order by 2 desc, word limit 3`)
      for (const a of alike.rows) terms.push({ text: a.word, phrase: false, prefix: false })
      best = Math.max(best, alike.rows[0]?.likeness ?? 0)
    }
    if (terms.length === 0) return null
    clauses.push(terms)
    likeness = Math.min(likeness, best)
  }
  return { query: { ...p, clauses }, likeness }
}

/** A code (digits) is rare in any collection: no walk, the GIN index finds it. */
const forQuery = (source: Source, p: ParsedQuery): Source => (p.code ? { ...source, walk: false } : source)

type Tier = { match: 'fulltext' | 'substring' | 'fuzzy'; hits: () => Promise<Hit[]> }

export async function searchPostgres(ex: Executor, input: SearchInput, p: ParsedQuery): Promise<SearchRow[]> {
  const rows: SearchRow[] = []
  if (p.gtin && input.types.includes('product')) {
    const filters = SOURCES.product.row(input)
    const exact = await ex.execute<{ id: string }>(
      sql`select h.id from products h where h.gtin = ${p.gtin}${filters ? sql` and ${filters}` : sql``}`,
    )
    const hits = exact.rows.map((r) => ({ type: 'product' as const, id: r.id, rank: 1 }))
    rows.push(...(await rowsOf(ex, hits)).map((r) => toRow(r, 'gtin', input)))
    // a code that is a GTIN and found: its product is the answer (text tiers would find it again)
    if (p.code && rows.length > 0) return rows
  }
  if (p.clauses.length === 0) return rows
  // each tier's hits over the selected collections, one collection after the other
  const each = async (hitsOf: (s: Source) => Promise<Hit[]>) => {
    const hits: Hit[] = []
    for (const collection of input.types) hits.push(...(await hitsOf(forQuery(SOURCES[collection], p))))
    return hits
  }
  const tiers: Tier[] = [
    { match: 'fulltext', hits: () => each((s) => fulltext(ex, s, p, input)) },
    {
      match: 'substring',
      hits: async () =>
        p.clauses.some((c) => c.every((t) => t.text.length >= 3)) ? each((s) => substring(ex, s, p, input)) : [],
    },
    {
      match: 'fuzzy',
      hits: async () => {
        const fix = await corrected(ex, p)
        if (!fix) return []
        const found = await each((s) => fulltext(ex, s, fix.query, input))
        return found.map((h) => ({ ...h, rank: h.rank * fix.likeness }))
      },
    },
  ]
  const seen = new Set(rows.map((r) => r.id))
  for (const tier of tiers) {
    const hits = await tier.hits()
    if (hits.length === 0) continue
    hits.sort((a, b) => b.rank - a.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const top = hits.slice(0, input.limit)
    for (const r of await rowsOf(ex, top)) {
      const row = toRow(r, tier.match, input)
      if (!seen.has(row.id)) rows.push(row)
    }
    break
  }
  return rows.slice(0, input.limit)
}
