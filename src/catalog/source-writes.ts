import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import { productCandidates, products } from '../db/schema'
import type { DATA_SOURCES } from '../db/schema/catalog'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { markSearchDocuments, refreshSearchDocuments } from '../search'
import { normalizeField, PRODUCT_FIELDS, type ProductField, type TagField } from './fields'
import { insertStatedProducts, type StatedValues } from './new-products'
import { SOURCE_CONFIDENCE } from './provenance'
import { promoteQueue } from './queues'

type DataSource = (typeof DATA_SOURCES)[number]

/** What a source says of one product: its GTIN-14 (read with readTradeGtin) and field values. */
export type SourceRecord = {
  gtin14: string
  /** null: the product must exist, but the source says nothing of it here (its earlier values stand) */
  fields: Partial<Record<ProductField | 'brand' | TagField, unknown>> | null
}

/** Products by GTIN-14 (those that exist). */
async function idsOf(tx: Tx, gtins: string[]) {
  const ids = new Map<string, string>()
  if (gtins.length)
    for (const r of await tx
      .select({ id: products.id, gtin: products.gtin })
      .from(products)
      // as char(14), the column's own type: compared as text, the unique index is not used and
      // every chunk read the whole table
      .where(sql`${products.gtin} = any(${sql.param(gtins)}::bpchar[])`))
      ids.set(r.gtin, r.id)
  return ids
}

/**
 * The write path of feeds: many products in a few statements, in the caller's transaction.
 * Unknown GTINs become unclaimed products (no owner, no brand, `data_source` the source); every
 * given value is recorded as a candidate of the source (normalised as the API stores it), never
 * written over the record directly. What the same source and contributor said of these products
 * through the same feed (`scope`: its retailer, the nil UUID for another source's feed, null through
 * the API) before is replaced, and nothing else: a statement is keyed by (product, source,
 * contributor, scope), so two feeds of one organization never replace each other's, and
 * an organization's statement (crowd_sourced, its id) replaces only its own earlier one and never
 * another source's or organization's candidates. Deciding the fields of existing
 * products is the caller's (promoteProducts, or a `catalog.promote` job), so a claimed
 * (brand-owner) value always wins. With `decideNew`, the products it creates are written once with
 * their decided values (insertStatedProducts: nobody holds them, so no event); otherwise they are made empty.
 * Returns the product id of every GTIN and the ids of the products it created.
 */
export async function writeSourceRecords(
  tx: Tx,
  source: DataSource,
  records: SourceRecord[],
  contributorId: string | null = null,
  {
    decideNew = false,
    scope = null,
    search = 'now',
    plainFirst = true,
  }: { decideNew?: boolean; scope?: string | null; search?: 'now' | 'later'; plainFirst?: boolean } = {},
) {
  const gtins = [...new Set(records.map((r) => r.gtin14))]
  if (gtins.length === 0) return { ids: new Map<string, string>(), created: new Set<string>() }
  // each record's values normalised once, in one pass over its fields: they decide new products
  // (as a list) and are stored as its statement's candidates (as an object)
  const stated: { gtin14: string; values: StatedValues; fields: Record<string, unknown> }[] = []
  for (const r of records) {
    if (r.fields === null) continue
    const values: StatedValues = []
    const fields: Record<string, unknown> = {}
    for (const field in r.fields) {
      const given = r.fields[field as keyof typeof r.fields]
      if (given === undefined || given === null || given === '') continue
      const value = field in PRODUCT_FIELDS ? normalizeField(field as ProductField, given) : given
      values.push({ field, value })
      fields[field] = value
    }
    stated.push({ gtin14: r.gtin14, values, fields })
  }

  let ids: Map<string, string>
  let created: Set<string>
  if (decideNew) {
    ids = await idsOf(tx, gtins)
    const said = Map.groupBy(stated, (r) => r.gtin14)
    const made = await insertStatedProducts(
      tx,
      source,
      contributorId,
      gtins
        .filter((g) => !ids.has(g))
        .map((gtin) => ({ gtin, statements: (said.get(gtin) ?? []).map((s) => s.values) })),
      { search, plainFirst },
    )
    for (const [gtin, id] of made) ids.set(gtin, id)
    created = new Set(made.values())
    // made by another transaction meanwhile: an existing product like the others
    for (const [gtin, id] of await idsOf(
      tx,
      gtins.filter((g) => !ids.has(g)),
    ))
      ids.set(gtin, id)
  } else {
    // column arrays, not a multi-row VALUES of every column (a chunk's 2,000 rows took longer to build than to insert)
    const inserted = (
      await tx.execute<{ id: string; gtin: string }>(sql`insert into products (gtin, data_source)
        select gtin, ${source} from unnest(${arrayParam(gtins, 'text')}) as g(gtin)
        on conflict (gtin) do nothing returning id, gtin`)
    ).rows
    ids = new Map(inserted.map((r) => [r.gtin, r.id]))
    created = new Set(inserted.map((r) => r.id))
    // searchable by GTIN at once (or after the drain); their promotion refreshes what it changes
    await (search === 'later' ? markSearchDocuments : refreshSearchDocuments)(tx, 'product', [...created])
    for (const [gtin, id] of await idsOf(
      tx,
      gtins.filter((g) => !ids.has(g)),
    ))
      ids.set(gtin, id)
  }

  // a product made here has no earlier values to replace
  const restated = [...new Set(stated.map((r) => ids.get(r.gtin14)!))].filter((id) => !created.has(id))
  if (restated.length)
    await tx
      .delete(productCandidates)
      .where(
        and(
          inArray(productCandidates.productId, restated),
          eq(productCandidates.source, source),
          contributorId === null
            ? isNull(productCandidates.contributorId)
            : eq(productCandidates.contributorId, contributorId),
          scope === null ? isNull(productCandidates.scope) : eq(productCandidates.scope, scope),
        ),
      )
  // a record's values are one statement: one candidate row holds them all
  const statements: { id: string; product_id: string; fields: Record<string, unknown> }[] = []
  for (const s of stated)
    if (s.values.length)
      // time-ordered, as new products' ids (insertStatedProducts)
      statements.push({ id: Bun.randomUUIDv7(), product_id: ids.get(s.gtin14)!, fields: s.fields })
  // one statement whose rows travel as one JSON document (serialised natively; an array of JSON
  // texts is escaped character by character), read as jsonb: parsed once, each row's fields taken
  // from the tree as they are. As json it was checked, parsed again by json_to_recordset, and each
  // row's fields parsed a third time into jsonb (2,500-row chunks, backend CPU: 10.4-12.0 µs a row
  // against 5.7-6.0)
  if (statements.length)
    await tx.execute(sql`insert into product_candidates (id, product_id, fields, source, confidence, contributor_id, scope, created)
      select c.id, c.product_id, c.fields, ${source}, ${SOURCE_CONFIDENCE[source]}, ${contributorId}::uuid, ${scope}::uuid, now()
      from jsonb_to_recordset(${JSON.stringify(statements)}::jsonb) as c(id uuid, product_id uuid, fields jsonb)`)
  return { ids, created }
}

/**
 * writeSourceRecords with promotion left to a `catalog.promote` job per product (sent with the
 * writes). The products it makes belong to nobody, so they emit no event (contract §7).
 */
export function upsertFromSource(ex: Executor, source: DataSource, records: SourceRecord[]) {
  return inTransaction(ex, async (tx) => {
    const { ids, created } = await writeSourceRecords(tx, source, records)
    await promoteQueue.insert(
      tx,
      [...ids.values()].map((productId) => ({ data: { productId } })),
    )
    const gtinOf = new Map([...ids].map(([gtin, id]) => [id, gtin]))
    return { ids, created: [...created].map((id) => gtinOf.get(id)!) }
  })
}
