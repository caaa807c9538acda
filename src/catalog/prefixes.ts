import { desc, inArray, sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import { companyPrefixes, products } from '../db/schema'
import type { Executor, Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { AppError } from '../shared/errors'
import { selectProducts, toProductResource } from './resource'

/**
 * GS1 company prefixes belong to one organization each (issue 44): a GTIN under a prefix that
 * another organization holds can be neither created nor claimed, and the holder's claim takes the
 * product over. A GTIN's company prefix is read from its GTIN-13 form (the GTIN-14 without its
 * indicator digit); prefixes have 4 to 12 digits and the longest one registered decides.
 */
const SHORTEST = 4
const LONGEST = 12

/** The candidate prefixes of a GTIN-14: the first 4 to 12 digits of its GTIN-13 form. */
export function prefixesOf(gtin14: string): string[] {
  const gtin13 = gtin14.slice(1)
  const out: string[] = []
  for (let n = SHORTEST; n <= LONGEST; n++) out.push(gtin13.slice(0, n))
  return out
}

/**
 * Claims and creates wait (shared) while a registration runs (exclusive), so that a claim cannot
 * slip in between a registration's check of the products under its prefixes and its commit.
 */
const LOCK = sql`hashtext('gs1_company_prefixes')`
export const holdPrefixesSteady = (tx: Tx) => tx.execute(sql`select pg_advisory_xact_lock_shared(${LOCK})`)

/** The organization holding the longest registered company prefix of the GTIN-14, or null. */
export async function prefixHolder(ex: Executor, gtin14: string): Promise<string | null> {
  const [row] = await ex
    .select({ organizationId: companyPrefixes.organizationId })
    .from(companyPrefixes)
    .where(inArray(companyPrefixes.prefix, prefixesOf(gtin14)))
    .orderBy(desc(sql`length(${companyPrefixes.prefix})`))
    .limit(1)
  return row?.organizationId ?? null
}

/**
 * 409 when the GTIN is under a prefix another organization holds; the detail never names it.
 * Takes the shared lock (holdPrefixesSteady); a caller that locks a product row first must take
 * that lock before it, as a registration locks the products under its prefixes after its own.
 */
export async function refuseForeignPrefix(tx: Tx, organizationId: string, gtin14: string, verb: 'create' | 'claim') {
  await holdPrefixesSteady(tx)
  const holder = await prefixHolder(tx, gtin14)
  if (holder !== null && holder !== organizationId)
    throw new AppError(
      'conflict',
      `${gtin14} is under a GS1 company prefix registered to another organization; only that organization can ${verb} it`,
    )
  return holder
}

/**
 * Records `prefixes` as the organization's: 409 `conflict` when another organization holds one of
 * them, or a prefix of one, or one that starts with it. Claims other organizations hold under the
 * new prefixes become `disputed` (the resolver withholds their links; the holder can claim them),
 * each with `product.updated` to the organization that held the claim.
 */
export async function registerPrefixes(tx: Tx, organizationId: string, prefixes: string[]) {
  if (prefixes.length === 0) return
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK})`)
  const given = arrayParam(prefixes, 'text')
  const taken = await tx.execute<{ given: string; held: string }>(sql`
    select n as given, g.prefix as held from ${companyPrefixes} g, unnest(${given}) as n
    where g.organization_id <> ${organizationId} and (starts_with(n, g.prefix) or starts_with(g.prefix, n))
    order by n limit 1`)
  const clash = taken.rows[0]
  if (clash)
    throw new AppError(
      'conflict',
      clash.given === clash.held
        ? `GS1 company prefix ${clash.given} is already registered to another organization`
        : `GS1 company prefix ${clash.given} overlaps ${clash.held}, which is registered to another organization`,
    )
  await tx
    .insert(companyPrefixes)
    .values(prefixes.map((prefix) => ({ prefix, organizationId })))
    .onConflictDoNothing()
  await disputeClaimsUnder(tx, organizationId, prefixes)
}

/** The GTIN-14 range of each indicator digit under each prefix: index range scans on `products.gtin`. */
function gtinRanges(prefixes: string[]) {
  const low: string[] = []
  const high: string[] = []
  for (const prefix of prefixes)
    for (let indicator = 0; indicator <= 9; indicator++) {
      low.push(`${indicator}${prefix}`.padEnd(14, '0'))
      high.push(`${indicator}${prefix}`.padEnd(14, '9'))
    }
  return { low, high }
}

async function disputeClaimsUnder(tx: Tx, holder: string, prefixes: string[]) {
  const { low, high } = gtinRanges(prefixes)
  const disputed = await tx.execute<{ id: string }>(sql`
    update ${products} p set claim_verification_status = 'disputed', modified = now()
    from unnest(${arrayParam(low, 'text')}, ${arrayParam(high, 'text')}) as r(low, high)
    where p.gtin between r.low::char(14) and r.high::char(14) and p.owner_id is not null and p.owner_id <> ${holder}
      and p.claim_verification_status is distinct from 'disputed'
    returning p.id`)
  const ids = disputed.rows.map((r) => r.id)
  if (ids.length === 0) return
  const rows = await selectProducts(tx).where(inArray(products.id, ids))
  await emit(
    tx,
    ...rows.map((row) => ({
      eventType: 'product.updated' as const,
      organizationId: row.product.ownerId,
      subjectId: row.product.id,
      data: toProductResource(row),
    })),
  )
}
