import { sql } from 'drizzle-orm'
import { db } from '../db/client'
import { logger } from '../shared/logger'
import type { ParsedQuery, Term } from './query'

/**
 * Whether a full-text query is known to be rare in product documents, so that their GIN index
 * finds every match at once and the walk in title order (`inTitleOrder`) is skipped.
 *
 * The walk reads product documents in title order until `limit` of them match, at most
 * `WINDOW.body` (a thousand): cheap for a common word, which fills the limit within a few rows, and
 * the whole window for a word no document holds, about 7 ms on the 2-core machine. That is what a
 * typo or a substring paid before its own tier ran (`choclate`, `ocolat`: neither is a word of any
 * document), and at concurrency 16 it was most of their 50-75 ms p95 at a million products.
 *
 * What is common comes from PostgreSQL's own statistics of `search_products.search_vector`
 * (ANALYZE, run by autovacuum): its most common lexemes, every lexeme above a frequency of about
 * 0.1-1 % in the sample. A clause is rare when each of its terms is missing from that list: a word or
 * phrase with a word that is not on it, a prefix that no lexeme on it begins with. A query is rare
 * when one of its clauses is (its matches are a subset of that clause's). The GIN lookup then
 * fetches each match once, which the walk would also have done, after a thousand rows short of
 * `limit` hits.
 *
 * The decision only chooses how the same rows are found, in the same order: a wrong one costs time,
 * never a result. So the words are folded here roughly as the `catalog` configuration folds them,
 * and the list is read at most once a minute (reading `pg_stats` takes 1-2 ms, more than the lookup
 * it saves). Without statistics (never analyzed) nothing is rare and the walk runs as before; with
 * stale ones, a word that became common since the last ANALYZE is looked up in the GIN index.
 */
export function rareInProducts(p: ParsedQuery, common: CommonLexemes | null): boolean {
  if (!common || p.code) return false
  const uncommon = (t: Term) => {
    const words = lexemesOf(t.text)
    if (words.length === 0) return false
    if (t.prefix) return !common.values().some((lexeme) => lexeme.startsWith(words[0]!))
    return words.some((w) => !common.has(w))
  }
  return p.clauses.some((clause) => clause.every(uncommon))
}

export type CommonLexemes = ReadonlySet<string>

/** Words as the `catalog` configuration's parser and dictionaries make them, near enough: lower case, no accents. */
export const lexemesOf = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0)

const REFRESH_MS = 60_000
let cached: { lexemes: CommonLexemes | null; at: number } | null = null
let reading: Promise<void> | null = null

/**
 * The most common lexemes of product documents as last read (null: none known yet, or never
 * analyzed); a read older than a minute starts a new one in the background.
 */
export function commonLexemes(now = Date.now()): CommonLexemes | null {
  if ((!cached || now - cached.at > REFRESH_MS) && !reading)
    reading = readCommonLexemes()
      .then((lexemes) => {
        cached = { lexemes, at: Date.now() }
      })
      .catch((err) => logger.warn({ err }, 'reading the search statistics failed; searches walk as without them'))
      .finally(() => {
        reading = null
      })
  return cached?.lexemes ?? null
}

/** Reads the list now; tests may give it instead (null: no statistics, every query walks). */
export async function refreshCommonLexemes(given?: Iterable<string> | null) {
  const lexemes = given === undefined ? await readCommonLexemes() : given && new Set(given)
  cached = { lexemes, at: Date.now() }
}

async function readCommonLexemes(): Promise<CommonLexemes | null> {
  const { rows } = await db.execute<{ lexemes: string[] | null }>(sql`
    select most_common_elems::text::text[] as lexemes from pg_stats
    where schemaname = current_schema() and tablename = 'search_products' and attname = 'search_vector'`)
  const lexemes = rows[0]?.lexemes
  if (!lexemes) return null
  return new Set(lexemes)
}
