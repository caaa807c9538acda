import { inArray } from 'drizzle-orm'
import { productCandidates, products } from '../db/schema'
import type { DATA_SOURCES } from '../db/schema/catalog'
import { type Executor, inTransaction } from '../db/tx'
import { emit } from '../events/outbox'
import { normalizeField, type ProductField } from './fields'
import { SOURCE_CONFIDENCE } from './provenance'
import { promoteQueue } from './queues'
import { selectProducts, toProductResource } from './resource'

type DataSource = (typeof DATA_SOURCES)[number]

/** What a source says of one product: its GTIN-14 (read with readTradeGtin) and field values. */
export type SourceRecord = { gtin14: string; fields: Partial<Record<ProductField | 'brand', unknown>> }

// PostgreSQL takes at most 65,535 parameters a statement; candidate rows carry 6 each.
const CANDIDATES_PER_STATEMENT = 5_000

/**
 * The write path of feeds: many products in a few statements, in the caller's transaction.
 * Unknown GTINs become unclaimed products (no owner, no brand, `data_source` the source); every
 * given value is recorded as a candidate from the source (normalised as the API stores it), never
 * written over the record directly; a `catalog.promote` job per product then decides each field,
 * so a claimed (brand-owner) value always wins. Emits `product.created` for each new product.
 * Returns the product id of every GTIN and the GTINs that were created.
 */
export function upsertFromSource(ex: Executor, source: DataSource, records: SourceRecord[]) {
  return inTransaction(ex, async (tx) => {
    const gtins = [...new Set(records.map((r) => r.gtin14))]
    if (gtins.length === 0) return { ids: new Map<string, string>(), created: [] as string[] }
    const inserted = await tx
      .insert(products)
      .values(gtins.map((gtin) => ({ gtin, dataSource: source })))
      .onConflictDoNothing({ target: products.gtin })
      .returning({ id: products.id, gtin: products.gtin })
    const rows = await tx
      .select({ id: products.id, gtin: products.gtin })
      .from(products)
      .where(inArray(products.gtin, gtins))
    const ids = new Map(rows.map((r) => [r.gtin, r.id]))

    const candidates = records.flatMap(({ gtin14, fields }) =>
      Object.entries(fields)
        .filter(([, value]) => value !== undefined && value !== null && value !== '')
        .map(([field, value]) => ({
          productId: ids.get(gtin14)!,
          field,
          value: field === 'brand' ? value : normalizeField(field as ProductField, value),
          source,
          confidence: SOURCE_CONFIDENCE[source],
          contributorId: null,
        })),
    )
    for (let i = 0; i < candidates.length; i += CANDIDATES_PER_STATEMENT)
      await tx.insert(productCandidates).values(candidates.slice(i, i + CANDIDATES_PER_STATEMENT))

    await promoteQueue.insert(
      tx,
      rows.map((r) => ({ data: { productId: r.id } })),
    )
    if (inserted.length) {
      const created = await selectProducts(tx).where(
        inArray(
          products.id,
          inserted.map((r) => r.id),
        ),
      )
      await emit(
        tx,
        ...created.map((p) => ({
          eventType: 'product.created' as const,
          organizationId: null,
          subjectId: p.product.id,
          data: toProductResource(p),
        })),
      )
    }
    return { ids, created: inserted.map((r) => r.gtin) }
  })
}
