import { type SQL, sql } from 'drizzle-orm'
import type { ParsedQuery, Term } from './query'
import { filterShape, filterValues } from './sources'
import { type Values, value } from './statements'
import type { SearchInput } from './types'

// A parsed query as search statements take it: the values of their placeholders, the shape that
// keys them, and the tsqueries built from the placeholders (the typo tier's corrected one included).

/**
 * The placeholders of a query's terms: `t<clause>_<term>` and `x<excluded>` their tsquery texts,
 * `l<clause>_<term>` and `lx<excluded>` their substring patterns, `w<clause>_<term>` the words as typed.
 */
const tsText = (t: Term) => (t.prefix ? `${t.text}:*` : t.text)
const likeText = (t: Term) => `%${t.text.replace(/[\\%_]/g, '\\$&')}%`

/** The values of every placeholder a search's statements use: the terms', the filters', `limit`, `gtin`. */
export function valuesOf(p: ParsedQuery, input: SearchInput): Values {
  const values: Values = { ...filterValues(input), limit: input.limit, gtin: p.gtin }
  p.clauses.forEach((clause, c) => {
    clause.forEach((t, i) => {
      values[`t${c}_${i}`] = tsText(t)
      values[`l${c}_${i}`] = likeText(t)
      values[`w${c}_${i}`] = t.text
    })
  })
  p.excluded.forEach((t, i) => {
    values[`x${i}`] = tsText(t)
    values[`lx${i}`] = likeText(t)
  })
  return values
}

/**
 * What a search's statements are built from besides the placeholders' values: the collections, how
 * many clauses and terms (and which are prefixes), whether the query is a code, which filters.
 */
export function shapeOf(p: ParsedQuery, input: SearchInput): string {
  const terms = (ts: Term[]) => ts.map((t) => (t.prefix ? 'p' : 'w')).join('')
  return [
    input.types.join(','),
    p.code ? 'code' : '',
    p.clauses.map(terms).join('.'),
    terms(p.excluded),
    filterShape(input),
  ].join('|')
}

const tsTerm = (t: Term, name: string) =>
  t.prefix ? sql`to_tsquery('catalog', ${value(name)})` : sql`phraseto_tsquery('catalog', ${value(name)})`
/** A tsquery of the query's terms: a scalar subquery, so a generic plan builds it once, not per row. */
export const once = (expression: SQL) => sql`(select ${expression})`
export const positive = (p: ParsedQuery) =>
  once(
    sql.join(
      p.clauses.map(
        (clause, c) =>
          sql`(${sql.join(
            clause.map((t, i) => tsTerm(t, `t${c}_${i}`)),
            sql` || `,
          )})`,
      ),
      sql` && `,
    ),
  )
export const excluded = (p: ParsedQuery) =>
  p.excluded.length > 0
    ? once(
        sql.join(
          p.excluded.map((t, i) => tsTerm(t, `x${i}`)),
          sql` || `,
        ),
      )
    : null

/**
 * The typo tier's query, in SQL (CTEs `fuzzy_terms` and `fuzzy` for `Statement.prelude`): each
 * word of 3 characters or more replaced by the catalog's most alike words (up to three, trigram
 * similarity 0.3 or more, `search_words`), shorter terms kept; `fuzzy.q` is null when a clause is
 * left without a term. `fuzzy.likeness`: how alike the least alike clause's best word is (a term
 * kept counts 1), the factor on the rows' ranks. A term whose query is empty constrains nothing,
 * as in full text. Never for codes or phrases (`hasFuzzy`).
 */
export function fuzzyPrelude(p: ParsedQuery): SQL {
  const terms = p.clauses.flatMap((clause, c) =>
    clause.map((t, i) => {
      const word = value(`w${c}_${i}`)
      return sql`(${sql.raw(String(c))}, ${word}::text,
        case when length(${word}::text) < 3 then ${tsTerm(t, `t${c}_${i}`)} end)`
    }),
  )
  return sql`fuzzy_terms as materialized (
      select t.c, coalesce(t.kept, to_tsquery('catalog', a.words)) as q,
        case when t.kept is not null then 1 else a.best end as likeness
      from (values ${sql.join(terms, sql`, `)}) t(c, word, kept)
        left join lateral (
          select string_agg(x.word, ' | ' order by x.likeness desc, x.word) as words, max(x.likeness) as best
          from (select w.word, similarity(w.word, catalog_fold(t.word))::float8 as likeness from search_words w
            where t.kept is null and w.word % catalog_fold(t.word) order by 2 desc, w.word limit 3) x) a on true),
    fuzzy as materialized (
      select case when count(*) filter (where k.usable) = ${sql.raw(String(p.clauses.length))}
          then string_agg('(' || k.q || ')', ' & ')::tsquery end as q,
        min(k.likeness) as likeness
      from (select c, bool_or(q is not null) as usable, max(likeness) as likeness,
          string_agg('(' || q::text || ')', ' | ') filter (where numnode(q) > 0) as q
        from fuzzy_terms group by c) k)`
}
