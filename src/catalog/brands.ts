import { and, eq, isNull, sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import { brands, organizations } from '../db/schema'
import type { Tx } from '../db/tx'
import { markSearchDocuments, refreshSearchDocuments } from '../search'

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
  if (made) await refreshSearchDocuments(tx, 'brand', [made.id])
  if (made) return made
  const [raced] = await tx.select(columns).from(brands).where(named)
  return raced!
}

export const brandKey = (organizationId: string | null, name: string) =>
  `${organizationId ?? ''}\u0000${name.toLowerCase()}`

/**
 * The brands of many (organization, name) pairs, made when missing, in three statements of column
 * arrays (a feed chunk names thousands): keyed by brandKey. Names compare without case, as
 * brandRecord does. New brands are inserted in name order, so concurrent chunks wait on each other
 * instead of deadlocking. Their search documents are built now, or with `search: 'later'` (a bulk
 * writer) marked for the search drain.
 */
export async function brandsFor(
  tx: Tx,
  wanted: { organizationId: string | null; name: string }[],
  { search = 'now' }: { search?: 'now' | 'later' } = {},
) {
  const ids = new Map<string, string>()
  const unique = [...new Map(wanted.map((w) => [brandKey(w.organizationId, w.name), w])).values()]
  if (unique.length === 0) return ids
  const lowered = (list: typeof unique) =>
    sql`array(select lower(n) from unnest(${arrayParam(
      list.map((w) => w.name),
      'text',
    )}) n)`
  const unowned = unique.filter((w) => w.organizationId === null)
  const owned = unique.filter((w) => w.organizationId !== null)
  // = any(array) on the unique indexes' expressions: index lookups, whatever the table's statistics
  // say (a join planned on a brands table that just grew ran as a nested loop, 2,000 x 2,000)
  const read = async () => {
    const found = await tx.execute<{ id: string; name: string; organization_id: string | null }>(sql`
      select id, name, organization_id from brands
      where (organization_id is null and lower(name) = any(${lowered(unowned)}))
         or (organization_id = any(${arrayParam(
           owned.map((w) => w.organizationId),
           'uuid',
         )}) and lower(name) = any(${lowered(owned)}))`)
    const wanted = new Set(unique.map((w) => brandKey(w.organizationId, w.name)))
    for (const b of found.rows) {
      const key = brandKey(b.organization_id, b.name)
      if (wanted.has(key)) ids.set(key, b.id)
    }
  }
  await read()
  if (ids.size === unique.length) return ids
  const missing = unique.filter((w) => !ids.has(brandKey(w.organizationId, w.name)))
  missing.sort((a, b) => brandKey(a.organizationId, a.name).localeCompare(brandKey(b.organizationId, b.name)))
  const inserted = await tx.execute<{ id: string }>(sql`insert into brands (name, organization_id)
    select name, org from unnest(${arrayParam(
      missing.map((w) => w.name),
      'text',
    )}, ${arrayParam(
      missing.map((w) => w.organizationId),
      'uuid',
    )}) with ordinality as w(name, org, n) order by n
    on conflict do nothing returning id`)
  const made = inserted.rows.map((r) => r.id)
  await (search === 'now' ? refreshSearchDocuments : markSearchDocuments)(tx, 'brand', made)
  await read()
  return ids
}

/**
 * Makes the unowned brands of these names that do not exist yet, in one statement (a feed chunk
 * names thousands, nearly all made before): the caller finds them by name in its own later
 * statement, which sees what concurrent writers committed meanwhile. Missing names are inserted in
 * lower-case order, so concurrent chunks wait on each other instead of deadlocking. Their search
 * documents are built now, or with `search: 'later'` marked for the search drain.
 */
export async function ensureUnownedBrands(tx: Tx, names: string[], { search = 'now' }: { search?: 'now' | 'later' }) {
  const unique = [...new Map(names.map((n) => [n.toLowerCase(), n])).values()]
  if (unique.length === 0) return
  // the existing ones found by one index scan of the names (= any of an array), then compared by
  // hash: a per-name `not exists` was planned on the statistics of a brands table that had just
  // grown from nothing, as a scan of every brand per name (8.5 s for one chunk of 2,500 names,
  // measured with pg_stat_statements on a first import). The array is a subquery's, lowered by
  // PostgreSQL as the index is: as a parameter, the planner saw its 2,500 names and read every
  // platform brand instead of the index (a chunk's 2,500 known names, backend CPU: 15.8-18.5 ms at
  // 55,000 platform brands against 3.3-4.0 through the index; at the bench's 5,000, 3.7 either way)
  const given = arrayParam(unique, 'text')
  const made = await tx.execute<{ id: string }>(sql`with given as (select n from unnest(${given}) n)
    insert into brands (name)
    select n from given
    where lower(n) not in (select lower(b.name) from brands b
      where b.organization_id is null and lower(b.name) = any(array(select lower(n) from given)))
    order by lower(n)
    on conflict do nothing returning id`)
  await (search === 'now' ? refreshSearchDocuments : markSearchDocuments)(
    tx,
    'brand',
    made.rows.map((r) => r.id),
  )
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
