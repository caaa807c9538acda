import type { SubstanceMatch } from '../../db/schema'
import { toShortId } from '../../shared/ids'
import type { ParsedQuery, Term } from '../query'
import { CONFIDENT, type Collection, type SearchInput, type SearchRow } from '../types'
import { typesense } from './client'
import { COLLECTIONS, NAME_FIELD, QUERY_BY } from './schema'

/**
 * Catalog search answered by Typesense (Typesense mode), in the same tiers and row shapes as the
 * PostgreSQL path, each tier one `multi_search` request across the selected collections:
 * - `gtin`: `q=*` with `filter_by: gtin:=<GTIN-14>`;
 * - `fulltext`: no typos, no dropped words, the last word a prefix while it is being typed;
 * - `substring`: infix matching on the name (Typesense matches the first word by infix);
 * - `fuzzy`: up to 2 typos a word (never for codes or phrases).
 * Quoted phrases and `-` exclusions are Typesense's own syntax. `OR` has no counterpart in `q`:
 * each combination of alternatives is one search of the request (at most `MAX_COMBINATIONS`), and
 * their hits are merged. Filters become `filter_by`. A row's rank is its `text_match` relative to
 * the request's best (the best text row is 0.99; 1 is kept for an exact GTIN).
 */
export const MAX_COMBINATIONS = 8

type Hit = { collection: Collection; document: Record<string, unknown>; text_match: number }
type SearchParams = Record<string, string | number | boolean>

const literal = (value: string) => `\`${value}\``
const list = (values: string[]) => `[${values.map(literal).join(',')}]`

/** The `filter_by` of a collection for these filters ('' when none). */
export function filterBy(collection: Collection, input: SearchInput): string {
  const parts: string[] = []
  if (collection === 'product') {
    if (input.excludeAllergens.length > 0) parts.push(`contains_allergens:!=${list(input.excludeAllergens)}`)
    for (const c of input.certifications) parts.push(`certifications:=${list([c])}`)
    if (input.excludeSubstances.length > 0) parts.push(`confident_substances:!=${list(input.excludeSubstances)}`)
  }
  if (collection === 'retailer') {
    parts.push('is_active:=true')
    parts.push(
      input.organizationId
        ? `(is_canonical:=true || organization_id:=${literal(input.organizationId)})`
        : 'is_canonical:=true',
    )
  }
  return parts.join(' && ')
}

const termText = (t: Term) => (t.phrase ? `"${t.text.replaceAll('"', '')}"` : t.text)

/** The `q` strings of a parsed query: one per combination of its OR alternatives. */
export function queryStrings(p: ParsedQuery): string[] {
  let combinations: Term[][] = [[]]
  for (const clause of p.clauses) {
    combinations = combinations.flatMap((prefix) => clause.map((t) => [...prefix, t])).slice(0, MAX_COMBINATIONS)
  }
  const excluded = p.excluded.map((t) => `-${termText(t)}`)
  return combinations.map((terms) => [...terms.map(termText), ...excluded].join(' '))
}

const TIERS = {
  fulltext: { num_typos: 0, typo_tokens_threshold: 0, drop_tokens_threshold: 0 },
  substring: { num_typos: 0, typo_tokens_threshold: 0, drop_tokens_threshold: 0, prefix: false },
  fuzzy: { num_typos: 2, typo_tokens_threshold: 1, drop_tokens_threshold: 0, prefix: false },
} satisfies Record<string, SearchParams>

function searchOf(collection: Collection, q: string, input: SearchInput, tier: keyof typeof TIERS, prefix: boolean) {
  const fields = QUERY_BY[collection]
  const params: SearchParams = {
    collection: COLLECTIONS[collection].name,
    q,
    query_by: fields.map((f) => f.field).join(','),
    query_by_weights: fields.map((f) => f.weight).join(','),
    sort_by: '_text_match:desc,title_len:asc',
    per_page: input.limit,
    highlight_fields: 'none',
    ...TIERS[tier],
  }
  if (tier === 'fulltext') params.prefix = prefix
  if (tier === 'substring')
    params.infix = fields.map((f) => (f.field === NAME_FIELD[collection] ? 'always' : 'off')).join(',')
  const filter = filterBy(collection, input)
  if (filter) params.filter_by = filter
  return params
}

async function multiSearch(searches: { collection: Collection; params: SearchParams }[]): Promise<Hit[]> {
  if (searches.length === 0) return []
  const response = (await typesense().multiSearch.perform({
    searches: searches.map((s) => s.params),
  } as never)) as unknown as {
    results: { hits?: { document: Record<string, unknown>; text_match?: number }[]; error?: string; code?: number }[]
  }
  const hits: Hit[] = []
  response.results.forEach((result, i) => {
    if (result.error) throw new Error(`Typesense search failed (${result.code}): ${result.error}`)
    for (const h of result.hits ?? [])
      hits.push({ collection: searches[i]!.collection, document: h.document, text_match: h.text_match ?? 0 })
  })
  return hits
}

/** Hits merged across searches: one per row (its best), best first, cut to `limit`. */
function merge(hits: Hit[], limit: number): Hit[] {
  const best = new Map<string, Hit>()
  for (const h of hits) {
    const key = `${h.collection}:${h.document.id}`
    if ((best.get(key)?.text_match ?? -1) < h.text_match) best.set(key, h)
  }
  return [...best.values()]
    .sort((a, b) => b.text_match - a.text_match || String(a.document.id).localeCompare(String(b.document.id)))
    .slice(0, limit)
}

function toRow(h: Hit, rank: number, match: SearchRow['match'], input: SearchInput): SearchRow {
  const d = h.document
  const base = { id: toShortId(String(d.id)), rank: Math.round(rank * 1e6) / 1e6, match }
  if (h.collection === 'product') {
    const substances = JSON.parse(String(d.substances ?? '[]')) as SubstanceMatch[]
    return {
      type: 'product',
      ...base,
      name: String(d.product_name ?? ''),
      gtin: String(d.gtin),
      brand: String(d.brand ?? ''),
      image_url: String(d.image_url ?? ''),
      contains_allergens: (d.contains_allergens as string[]) ?? [],
      certifications: (d.certifications as string[]) ?? [],
      substance_flags: substances.filter((s) => input.excludeSubstances.includes(s.slug) && s.confidence < CONFIDENT),
    }
  }
  if (h.collection === 'brand')
    return { type: 'brand', ...base, name: String(d.name), product_count: Number(d.product_count ?? 0) }
  return {
    type: 'retailer',
    ...base,
    name: String(d.name),
    website: String(d.website ?? ''),
    is_online: Boolean(d.is_online),
    is_physical: Boolean(d.is_physical),
  }
}

export async function searchTypesense(input: SearchInput, p: ParsedQuery): Promise<SearchRow[]> {
  const rows: SearchRow[] = []
  if (p.gtin && input.types.includes('product')) {
    const filter = [`gtin:=${literal(p.gtin)}`, filterBy('product', input)].filter(Boolean).join(' && ')
    const params = { ...searchOf('product', '*', input, 'fulltext', false), filter_by: filter, per_page: 1 }
    for (const h of await multiSearch([{ collection: 'product', params }])) rows.push(toRow(h, 1, 'gtin', input))
  }
  if (p.clauses.length === 0) return rows
  const seen = new Set(rows.map((r) => r.id))
  const prefix = p.clauses.flat().some((t) => t.prefix)
  const qs = queryStrings(p)
  const tiers: (keyof typeof TIERS)[] = ['fulltext']
  if (p.clauses.some((c) => c.every((t) => t.text.length >= 3))) tiers.push('substring')
  if (!p.code && !p.clauses.some((c) => c.some((t) => t.phrase))) tiers.push('fuzzy')
  for (const tier of tiers) {
    const searches = input.types.flatMap((collection) =>
      qs.map((q) => ({ collection, params: searchOf(collection, q, input, tier, prefix) })),
    )
    const hits = merge(await multiSearch(searches), input.limit)
    if (hits.length === 0) continue
    const top = Math.max(1, hits[0]!.text_match)
    for (const h of hits) {
      const row = toRow(h, (0.99 * Math.max(h.text_match, 1)) / top, tier, input)
      if (!seen.has(row.id)) rows.push(row)
    }
    break
  }
  return rows.slice(0, input.limit)
}
