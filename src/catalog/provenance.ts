import { asc, eq, inArray, sql } from 'drizzle-orm'
import { jsonb, pgView, real, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { config } from '../config'
import { brands, productCandidates, products } from '../db/schema'
import { type DATA_SOURCES, dataSource } from '../db/schema/catalog'
import type { Executor, Tx } from '../db/tx'
import { toShortId } from '../shared/ids'
import { ALL_FIELDS, type ProductField } from './fields'

type DataSource = (typeof DATA_SOURCES)[number]

/** How much one value from each source is trusted; claimed (brand-owner) values always win. */
export const SOURCE_CONFIDENCE: Record<DataSource, number> = {
  claimed: 1,
  gtin1_authoritative: 0.95,
  usda_fdc: 0.8,
  fda_ndc: 0.8,
  brand_site_crawl: 0.75,
  open_food_facts: 0.7,
  imported: 0.7,
  external_api: 0.65,
  affiliate_feed: 0.6,
  datakick: 0.5,
  common_crawl_wdc: 0.5,
  ai_extracted: 0.45,
  // an organization's own statement (a contribution, or a feed run started with its key): one alone
  // stays below the 0.6 threshold; two independent agreeing reach 0.64
  crowd_sourced: 0.4,
}

/** Fields that have candidates: every stored scalar field and the brand name. */
export const PROVENANCE_FIELDS: (ProductField | 'brand')[] = [...ALL_FIELDS, 'brand']

/**
 * The candidates one value a row, as promotion weighs them: a view over the statements of
 * `product_candidates` (migration 0018), one row per field of each.
 */
const candidateValues = pgView('product_candidate_values', {
  id: uuid().notNull(),
  productId: uuid().notNull(),
  field: text().notNull(),
  value: jsonb().$type<unknown>().notNull(),
  source: dataSource().notNull(),
  confidence: real().notNull(),
  contributorId: uuid(),
  created: timestamp({ withTimezone: true, mode: 'date' }).notNull(),
}).existing()

/** One value a source gave one field (the id is its statement's, shared by the statement's fields). */
export type Candidate = typeof candidateValues.$inferSelect
export type Winner = { value: unknown; source: DataSource; score: number }

/** A candidate for each field present in `input`: one statement of one source and contributor. */
export function candidateRows(
  productId: string,
  input: Partial<Record<string, unknown>>,
  source: DataSource,
  contributorId: string | null,
): Candidate[] {
  const id = crypto.randomUUID()
  const created = new Date()
  return PROVENANCE_FIELDS.filter((f) => input[f] !== undefined).map((field) => ({
    id,
    productId,
    field,
    value: input[field] as unknown,
    source,
    confidence: SOURCE_CONFIDENCE[source],
    contributorId,
    created,
  }))
}

/**
 * Writes candidates, one statement row for the values a source (and contributor) gives a product
 * at once; JSON null (a cleared value) is a value like any other.
 */
export async function insertCandidates(tx: Tx, rows: Candidate[]) {
  const statements = Map.groupBy(rows, (r) => `${r.productId} ${r.source} ${r.contributorId}`)
  if (statements.size)
    await tx.insert(productCandidates).values(
      [...statements.values()].map((list) => {
        const { id, productId, source, confidence, contributorId, created } = list[0]!
        const fields = Object.fromEntries(list.map((c) => [c.field, c.value]))
        return { id, productId, fields, source, confidence, contributorId, created }
      }),
    )
}

/** Records a value for each field present in `input`; returns the product's new confidence summary. */
export async function recordCandidates(
  tx: Tx,
  productId: string,
  input: Partial<Record<string, unknown>>,
  source: DataSource,
  contributorId: string | null,
) {
  await insertCandidates(tx, candidateRows(productId, input, source, contributorId))
  return summarize(decide(await candidatesOf(tx, productId), await ownerOf(tx, productId)))
}

/**
 * The organization that has claimed a product: its owner, or the organization its brand belongs
 * to (a product is claimed when either is set, as the API shows `is_claimed`); null when unclaimed.
 */
export async function ownerOf(ex: Executor, productId: string): Promise<string | null> {
  const [row] = await ex
    .select({ owner: sql<string | null>`coalesce(${products.ownerId}, ${brands.organizationId})` })
    .from(products)
    .leftJoin(brands, eq(brands.id, products.brandId))
    .where(eq(products.id, productId))
  return row?.owner ?? null
}

export const candidatesOf = (ex: Executor, productId: string) =>
  ex
    .select()
    .from(candidateValues)
    .where(eq(candidateValues.productId, productId))
    .orderBy(asc(candidateValues.created), asc(candidateValues.id))

/** The candidates of many products, oldest first. */
export const candidatesOfMany = (ex: Executor, productIds: string[]) =>
  ex
    .select()
    .from(candidateValues)
    .where(inArray(candidateValues.productId, productIds))
    .orderBy(asc(candidateValues.created), asc(candidateValues.id))

/**
 * The form two values are compared in: text without case, accents, quote styles or extra blanks
 * ("MI COSTENITA" agrees with "Mi Costeñita", "Huile d’olive" with "Huile d'olive"), numbers to
 * two decimals, lists in any order.
 */
export function comparisonKey(value: unknown): string {
  if (typeof value === 'string')
    return value
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .replace(/[\u2018\u2019\u02bc`´]/g, "'")
      .replace(/[\u201c\u201d]/g, '"')
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .trim()
  if (typeof value === 'number') return String(Math.round(value * 100) / 100)
  if (Array.isArray(value)) return JSON.stringify(value.map(comparisonKey).sort())
  return JSON.stringify(value)
}

/** How carefully a text is written: mixed case over all capitals, accents over their absence. */
function care(value: unknown): number {
  if (typeof value !== 'string') return 0
  const mixed = /\p{Ll}/u.test(value) && /\p{Lu}/u.test(value) ? 2 : /\p{Ll}/u.test(value) ? 1 : 0
  return mixed + (value.normalize('NFKD') !== value ? 1 : 0)
}

/**
 * Whether a candidate may decide a field of a product that `owner` has claimed (null: nobody has).
 * An organization's own statements (crowd contributions, its feed runs) never decide a field of
 * another organization's claimed product, not even one its owner left empty: a claimed product's
 * fields come from its owner, or from platform sources (feeds the platform runs).
 */
export const speaksFor = (owner: string | null) => (c: Candidate) =>
  owner === null || (c.source !== 'crowd_sourced' && c.source !== 'claimed') || c.contributorId === owner

/**
 * The canonical value of each field. The newest claimed value wins outright. Otherwise values are
 * grouped by their comparison key; each independent contributor (organization, or source when
 * anonymous) counts once with its best confidence, combined as 1 - Π(1 - c); the best group wins if
 * it reaches the threshold, written as its most trusted (then newest) member wrote it. Of a claimed
 * product (`owner`), other organizations' statements are left out (speaksFor), their owner-authority
 * (`claimed`) values included: a former owner's values, such as those of a claim taken over by
 * the GS1 company prefix's holder, no longer speak for the product.
 */
export function decide(
  candidates: Candidate[],
  owner: string | null = null,
  threshold = config.PROMOTION_THRESHOLD,
): Map<string, Winner> {
  const byField = Map.groupBy(candidates.filter(speaksFor(owner)), (c) => c.field)
  const winners = new Map<string, Winner>()
  for (const [field, list] of byField) {
    const claimed = list.filter((c) => c.source === 'claimed').at(-1)
    if (claimed) {
      winners.set(field, { value: claimed.value, source: 'claimed', score: claimed.confidence })
      continue
    }
    let best: (Winner & { at: number }) | null = null
    for (const group of Map.groupBy(list, (c) => comparisonKey(c.value)).values()) {
      const perContributor = new Map<string, Candidate>()
      for (const c of group) {
        const who = c.contributorId ?? `source:${c.source}`
        const seen = perContributor.get(who)
        if (!seen || seen.confidence <= c.confidence) perContributor.set(who, c)
      }
      const score = 1 - [...perContributor.values()].reduce((miss, c) => miss * (1 - c.confidence), 1)
      // written as its most carefully written member (mixed case, accents kept), then the most
      // trusted, then the newest (candidates come oldest first)
      const strongest = group.reduce((a, b) => {
        const order = care(b.value) - care(a.value) || b.confidence - a.confidence
        return order >= 0 ? b : a
      })
      const at = Math.max(...group.map((c) => c.created.getTime()))
      if (!best || score > best.score + 1e-9 || (Math.abs(score - best.score) < 1e-9 && at > best.at))
        best = { value: strongest.value, source: strongest.source, score, at }
    }
    if (best && best.score >= threshold - 1e-9)
      winners.set(field, { value: best.value, source: best.source, score: best.score })
  }
  return winners
}

/** field_confidence, confidence_score (mean over canonical fields) and data_source (of product_name). */
export function summarize(winners: Map<string, Winner>) {
  // one loop (a feed chunk summarises thousands of new products): the scores summed in field order
  const fieldConfidence: Record<string, number> = {}
  let sum = 0
  for (const [field, w] of winners) {
    const score = Math.round(Math.min(1, w.score) * 1000) / 1000
    fieldConfidence[field] = score
    sum += score
  }
  const confidenceScore = winners.size ? Math.round((sum / winners.size) * 1000) / 1000 : 0
  const nameSource = winners.get('product_name')?.source
  return { fieldConfidence, confidenceScore, ...(nameSource ? { dataSource: nameSource } : {}) }
}

/** GET …/provenance: every candidate per field, newest first, with the canonical one marked. */
export async function provenanceOf(ex: Executor, productId: string, gtin: string) {
  const candidates = await candidatesOf(ex, productId)
  const owner = await ownerOf(ex, productId)
  const winners = decide(candidates, owner)
  const counts = speaksFor(owner)
  const fields: Record<
    string,
    {
      value: unknown
      source: string
      confidence: number
      contributor_id: string | null
      created: string
      canonical: boolean
    }[]
  > = {}
  for (const c of [...candidates].reverse()) {
    const winner = winners.get(c.field)
    fields[c.field] ??= []
    fields[c.field]!.push({
      value: c.value,
      source: c.source,
      confidence: c.confidence,
      contributor_id: c.contributorId ? toShortId(c.contributorId) : null,
      created: c.created.toISOString(),
      canonical: winner !== undefined && counts(c) && comparisonKey(winner.value) === comparisonKey(c.value),
    })
  }
  return { gtin, fields }
}
