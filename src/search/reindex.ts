import { sql } from 'drizzle-orm'
import type { Executor } from '../db/tx'
import { buildSearchDocuments, rebuildSearchWords, removeOrphanDocuments, sourceTable } from './documents'
import { DRAIN_BATCH, TYPESENSE_BATCH } from './marks'
import { COLLECTIONS, type Collection } from './types'
import { ensureCollections, typesenseEnabled } from './typesense/client'
import { pushDocuments } from './typesense/sync'

/** A catalog table's row count and its size in blocks. */
async function sizeOf(ex: Executor, collection: Collection) {
  const table = sql.raw(sourceTable(collection))
  const rows = await ex.execute<{ n: number; blocks: number }>(sql`select (select count(*) from ${table})::int as n,
    (pg_relation_size(${sourceTable(collection)}::regclass) / current_setting('block_size')::int)::int as blocks`)
  return rows.rows[0]!
}

/** The ids of the rows stored in blocks [from, to) of a catalog table, in storage order. */
async function blockRange(ex: Executor, collection: Collection, from: number, to: number) {
  const rows = await ex.execute<{ id: string }>(sql`select id::text as id from ${sql.raw(sourceTable(collection))}
    where ctid >= ${`(${from},0)`}::tid and ctid < ${`(${to},0)`}::tid order by ctid`)
  return rows.rows.map((r) => r.id)
}

/**
 * A full rebuild (`npm run cli -- search reindex`): every document of every collection built again
 * from its row, about DRAIN_BATCH rows at a time in the catalog table's storage order (in Typesense
 * mode also sent there, in imports of TYPESENSE_BATCH, the missing collections created first); then
 * documents of rows that are gone removed and the word list rebuilt. `progress` is told after each
 * range. Storage order, not id order: the documents are then stored as their rows are, as the
 * writers leave them, so ties of equal rank keep the catalog's storage order and the planner sees
 * the same id correlation in both tables (with documents in id order it walked the title order
 * checking each document by primary key, where the catalog's order had it read the GIN index first,
 * four times cheaper for a rare word). A row a concurrent update moves is rebuilt by its writer.
 */
export async function reindexAll(
  ex: Executor,
  progress: (collection: Collection, done: number, total: number) => void | Promise<void>,
): Promise<Record<Collection, number>> {
  const typesense = typesenseEnabled()
  if (typesense) await ensureCollections()
  const totals = { product: 0, brand: 0, retailer: 0 }
  for (const collection of COLLECTIONS) {
    let { n: total, blocks } = await sizeOf(ex, collection)
    const step = Math.max(1, Math.floor((DRAIN_BATCH * Math.max(1, blocks)) / Math.max(1, total)))
    for (let from = 0; from < blocks; from += step) {
      const ids = await blockRange(ex, collection, from, from + step)
      if (ids.length > 0) {
        await buildSearchDocuments(ex, collection, ids, { words: false }) // the list is rebuilt at the end
        if (typesense)
          for (let i = 0; i < ids.length; i += TYPESENSE_BATCH)
            await pushDocuments(ex, collection, ids.slice(i, i + TYPESENSE_BATCH))
        totals[collection] += ids.length
        await progress(collection, totals[collection], Math.max(total, totals[collection]))
      }
      // rows added meanwhile may have grown the table: its end is read again at the last range
      if (from + step >= blocks) ({ n: total, blocks } = await sizeOf(ex, collection))
    }
  }
  await removeOrphanDocuments(ex)
  await rebuildSearchWords(ex)
  return totals
}
