import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { arrayParam } from '../db/params'
import { productCandidates, products } from '../db/schema'
import type { DATA_SOURCES } from '../db/schema/catalog'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { normalizeField, type ProductField } from './fields'
import { SOURCE_CONFIDENCE } from './provenance'
import { promoteQueue } from './queues'
import { selectProducts, toProductResource } from './resource'

type DataSource = (typeof DATA_SOURCES)[number]

/** What a source says of one product: its GTIN-14 (read with readTradeGtin) and field values. */
export type SourceRecord = {
  gtin14: string
  /** null: the product must exist, but the source says nothing of it here (its earlier values stand) */
  fields: Partial<Record<ProductField | 'brand' | 'labels', unknown>> | null
}

/**
 * The write path of feeds: many products in a few statements, in the caller's transaction.
 * Unknown GTINs become unclaimed products (no owner, no brand, `data_source` the source); every
 * given value is recorded as a candidate of the source (normalised as the API stores it), never
 * written over the record directly. What the source (and contributor) said of these products before
 * is replaced: a source states one value a field at a time. Deciding the fields is the caller's
 * (promoteProducts, or a `catalog.promote` job), so a claimed (brand-owner) value always wins.
 * Returns the product id of every GTIN and the ids of the products it created.
 */
export async function writeSourceRecords(
  tx: Tx,
  source: DataSource,
  records: SourceRecord[],
  contributorId: string | null = null,
) {
  const gtins = [...new Set(records.map((r) => r.gtin14))]
  if (gtins.length === 0) return { ids: new Map<string, string>(), created: new Set<string>() }
  // column arrays, not a multi-row VALUES of every column (a chunk's 2,000 rows took longer to build than to insert)
  const inserted = (
    await tx.execute<{ id: string; gtin: string }>(sql`insert into products (gtin, data_source)
      select gtin, ${source} from unnest(${arrayParam(gtins, 'text')}) as g(gtin)
      on conflict (gtin) do nothing returning id, gtin`)
  ).rows
  const ids = new Map(inserted.map((r) => [r.gtin, r.id]))
  const existing = gtins.filter((g) => !ids.has(g))
  if (existing.length)
    for (const r of await tx
      .select({ id: products.id, gtin: products.gtin })
      .from(products)
      .where(inArray(products.gtin, existing)))
      ids.set(r.gtin, r.id)

  const stated = records.filter((r) => r.fields !== null)
  const restated = [...new Set(stated.map((r) => ids.get(r.gtin14)!))]
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
        ),
      )
  const candidates = stated.flatMap(({ gtin14, fields }) =>
    Object.entries(fields!)
      .filter(([, value]) => value !== undefined && value !== null && value !== '')
      .map(([field, value]) => ({
        productId: ids.get(gtin14)!,
        field,
        value: field === 'brand' || field === 'labels' ? value : normalizeField(field as ProductField, value),
      })),
  )
  // one statement of column arrays: parameters are few, whatever the number of rows
  if (candidates.length)
    await tx.execute(sql`insert into product_candidates (product_id, field, value, source, confidence, contributor_id, created)
      select product_id, field, value::jsonb, ${source}, ${SOURCE_CONFIDENCE[source]}, ${contributorId}::uuid, now()
      from unnest(${arrayParam(
        candidates.map((c) => c.productId),
        'uuid',
      )}, ${arrayParam(
        candidates.map((c) => c.field),
        'text',
      )}, ${arrayParam(
        candidates.map((c) => JSON.stringify(c.value)),
        'text',
      )}) as c(product_id, field, value)`)
  return { ids, created: new Set(inserted.map((r) => r.id)) }
}

/**
 * writeSourceRecords with promotion left to a `catalog.promote` job per product (sent with the
 * writes), and `product.created` emitted for each new product at once.
 */
export function upsertFromSource(ex: Executor, source: DataSource, records: SourceRecord[]) {
  return inTransaction(ex, async (tx) => {
    const { ids, created } = await writeSourceRecords(tx, source, records)
    await promoteQueue.insert(
      tx,
      [...ids.values()].map((productId) => ({ data: { productId } })),
    )
    if (created.size) {
      const rows = await selectProducts(tx).where(inArray(products.id, [...created]))
      await emit(
        tx,
        ...rows.map((p) => ({
          eventType: 'product.created' as const,
          organizationId: null,
          subjectId: p.product.id,
          data: toProductResource(p),
        })),
      )
    }
    const gtinOf = new Map([...ids].map(([gtin, id]) => [id, gtin]))
    return { ids, created: [...created].map((id) => gtinOf.get(id)!) }
  })
}
