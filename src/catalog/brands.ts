import { and, eq, isNull, or, sql } from 'drizzle-orm'
import { brands, organizations } from '../db/schema'
import type { Tx } from '../db/tx'

/**
 * The brand named `name` of `organizationId` (or the unowned one when null), made on first use.
 * Concurrent callers converge on one row through the unique index.
 */
export async function brandFor(tx: Tx, organizationId: string | null, name: string): Promise<string> {
  return (await brandRecord(tx, organizationId, name)).id
}

/** The brand of that name (any case) of the organization (or the unowned one), made when missing. */
export async function brandRecord(tx: Tx, organizationId: string | null, name: string) {
  const owner = organizationId === null ? isNull(brands.organizationId) : eq(brands.organizationId, organizationId)
  const named = and(owner, sql`lower(${brands.name}) = lower(${name})`)
  const columns = { id: brands.id, name: brands.name }
  const [found] = await tx.select(columns).from(brands).where(named)
  if (found) return found
  const [made] = await tx.insert(brands).values({ name, organizationId }).onConflictDoNothing().returning(columns)
  if (made) return made
  const [raced] = await tx.select(columns).from(brands).where(named)
  return raced!
}

export const brandKey = (organizationId: string | null, name: string) =>
  `${organizationId ?? ''}\u0000${name.toLowerCase()}`

/**
 * The brands of many (organization, name) pairs, made when missing, in three statements: keyed by
 * brandKey. Names compare without case, as brandRecord does.
 */
export async function brandsFor(tx: Tx, wanted: { organizationId: string | null; name: string }[]) {
  const ids = new Map<string, string>()
  const unique = [...new Map(wanted.map((w) => [brandKey(w.organizationId, w.name), w])).values()]
  if (unique.length === 0) return ids
  const matching = () =>
    or(
      ...unique.map((w) =>
        and(
          w.organizationId === null ? isNull(brands.organizationId) : eq(brands.organizationId, w.organizationId),
          sql`lower(${brands.name}) = lower(${w.name})`,
        ),
      ),
    )
  const read = async () => {
    for (const b of await tx
      .select({ id: brands.id, name: brands.name, organizationId: brands.organizationId })
      .from(brands)
      .where(matching()))
      ids.set(brandKey(b.organizationId, b.name), b.id)
  }
  await read()
  const missing = unique.filter((w) => !ids.has(brandKey(w.organizationId, w.name)))
  if (missing.length === 0) return ids
  await tx
    .insert(brands)
    .values(missing.map((w) => ({ name: w.name, organizationId: w.organizationId })))
    .onConflictDoNothing()
  await read()
  return ids
}

/** The organization's name and GS1 company prefixes. */
export async function organizationProfile(tx: Tx, organizationId: string) {
  const [org] = await tx
    .select({ name: organizations.name, prefixes: organizations.gs1CompanyPrefixes })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
  return org!
}

/** prefix_matched when the GTIN falls under one of the organization's GS1 company prefixes. */
export function verificationFor(gtin14: string, prefixes: string[]) {
  const gtin13 = gtin14.slice(1)
  const gtin8 = gtin14.startsWith('000000') ? gtin14.slice(6) : null
  const matched = prefixes.some((p) => gtin13.startsWith(p) || gtin8?.startsWith(p) === true)
  return matched ? ('prefix_matched' as const) : ('unverified' as const)
}
