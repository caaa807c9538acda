import { sql } from 'drizzle-orm'
import { arrayParam } from '../../db/params'
import { defineQueue } from '../../db/queues'
import { searchIndexPending } from '../../db/schema'
import type { Executor, Tx } from '../../db/tx'
import { onEvent } from '../../events/consumers'
import type { DomainEvent } from '../../events/types'
import type { Collection } from '../types'
import { ensureCollections, typesense, typesenseEnabled } from './client'
import { countRows, idPage, loadDocuments } from './documents'
import { COLLECTIONS } from './schema'

/**
 * Typesense kept in step with the catalog (Typesense mode). The `search-index` consumer marks the
 * rows an event changed (a product and its brand, whose product count moves; a retailer) in
 * `search_index_pending`, in the event's transaction, and wakes the `search.index` queue. Its job
 * drains the marks in batches of `BATCH`: each batch's documents go to Typesense in one import
 * (`action=upsert`), rows that are gone are deleted, and the marks are removed only when Typesense
 * has taken the batch (a failure leaves them for the retry).
 */
export const BATCH = 500

/** At most one job waiting: marks made while one runs are taken by the next (stately policy). */
export const indexQueue = defineQueue<Record<string, never>>('search.index', {
  policy: 'stately',
  retryLimit: 10,
  retryDelay: 5,
  retryBackoff: true,
})

export async function markForIndex(ex: Executor, marks: { collection: Collection; id: string }[]) {
  if (marks.length === 0) return
  await ex.insert(searchIndexPending).values(marks).onConflictDoNothing()
  await indexQueue.send(ex, {})
}

async function marksOf(tx: Tx, event: DomainEvent): Promise<{ collection: Collection; id: string }[]> {
  if (event.eventType.startsWith('retailer.')) return [{ collection: 'retailer', id: event.subjectId }]
  const brand = await tx.execute<{ brand_id: string | null }>(
    sql`select brand_id from products where id = ${event.subjectId}`,
  )
  const brandId = brand.rows[0]?.brand_id
  return [
    { collection: 'product', id: event.subjectId },
    ...(brandId ? [{ collection: 'brand' as const, id: brandId }] : []),
  ]
}

/** Registered only in Typesense mode: PostgreSQL mode needs no copy, and no consumer jobs. */
export const indexConsumer = typesenseEnabled()
  ? onEvent(
      'search-index',
      [
        'product.created',
        'product.updated',
        'product.claimed',
        'product.unclaimed',
        'product.recalled',
        'retailer.created',
        'retailer.updated',
      ],
      async (tx, event) => markForIndex(tx, await marksOf(tx, event)),
    )
  : null

/** Sends these rows' current documents to Typesense: upserts, and deletes for rows that are gone. */
export async function pushDocuments(ex: Executor, collection: Collection, ids: string[]) {
  const docs = await loadDocuments(ex, collection, ids)
  const name = COLLECTIONS[collection].name
  if (docs.length > 0) await typesense().collections(name).documents().import(docs, { action: 'upsert' })
  const present = new Set(docs.map((d) => d.id))
  const gone = ids.filter((id) => !present.has(id))
  if (gone.length > 0)
    await typesense()
      .collections(name)
      .documents()
      .delete({ filter_by: `id:[${gone.join(',')}]` })
}

/** The `search.index` job: drains every mark, a batch per collection at a time; returns how many. */
export async function drainIndexMarks(ex: Executor): Promise<number> {
  await ensureCollections()
  let done = 0
  for (;;) {
    // marks as text: a JS Date would drop the microseconds the comparison below needs
    const batch = await ex
      .select({
        collection: searchIndexPending.collection,
        id: searchIndexPending.id,
        marked: sql<string>`${searchIndexPending.marked}::text`,
      })
      .from(searchIndexPending)
      .orderBy(searchIndexPending.marked)
      .limit(BATCH)
    if (batch.length === 0) return done
    for (const collection of ['product', 'brand', 'retailer'] as const) {
      const mine = batch.filter((m) => m.collection === collection)
      if (mine.length === 0) continue
      await pushDocuments(
        ex,
        collection,
        mine.map((m) => m.id),
      )
      // a row marked again while this batch was sent keeps its newer mark
      await ex.execute(sql`delete from search_index_pending p
        using unnest(${arrayParam(
          mine.map((m) => m.id),
          'uuid',
        )}, ${arrayParam(
          mine.map((m) => m.marked),
          'timestamptz',
        )}) m(id, marked)
        where p.collection = ${collection} and p.id = m.id and p.marked <= m.marked`)
      done += mine.length
    }
  }
}

/**
 * A full rebuild (`npm run cli -- search reindex`): creates missing collections, then upserts every row of every
 * collection in id order, a batch at a time; `progress` is told after each batch.
 */
export async function reindexAll(
  ex: Executor,
  progress: (collection: Collection, done: number, total: number) => void | Promise<void>,
): Promise<Record<Collection, number>> {
  await ensureCollections()
  const totals = { product: 0, brand: 0, retailer: 0 }
  for (const collection of ['product', 'brand', 'retailer'] as const) {
    const total = await countRows(ex, collection)
    let after: string | null = null
    for (;;) {
      const ids = await idPage(ex, collection, after, BATCH)
      if (ids.length === 0) break
      await pushDocuments(ex, collection, ids)
      totals[collection] += ids.length
      after = ids.at(-1)!
      await progress(collection, totals[collection], total)
    }
  }
  return totals
}
