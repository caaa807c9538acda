import { sql } from 'drizzle-orm'
import type { Executor } from '../db/tx'
import { buildSearchDocuments, rebuildSearchWords, removeOrphanDocuments, sourceTable } from './documents'
import { DRAIN_BATCH, TYPESENSE_BATCH } from './marks'
import { COLLECTIONS, type Collection } from './types'
import { ensureCollections, typesenseEnabled } from './typesense/client'
import { pushDocuments } from './typesense/sync'

/** Every id of a collection's catalog table in id order, a page at a time after `after`. */
async function idPage(ex: Executor, collection: Collection, after: string | null, size: number) {
  const rows = await ex.execute<{ id: string }>(sql`select id::text as id from ${sql.raw(sourceTable(collection))}
    ${after ? sql`where id > ${after}::uuid` : sql``} order by id limit ${size}`)
  return rows.rows.map((r) => r.id)
}

async function countRows(ex: Executor, collection: Collection): Promise<number> {
  const rows = await ex.execute<{ n: number }>(sql`select count(*)::int as n from ${sql.raw(sourceTable(collection))}`)
  return rows.rows[0]!.n
}

/**
 * A full rebuild (`npm run cli -- search reindex`): every document of every collection built again
 * from its row, in pages of DRAIN_BATCH in id order (in Typesense mode also sent there, in imports
 * of TYPESENSE_BATCH, the missing collections created first); then documents of rows that are gone
 * removed and the word list rebuilt. `progress` is told after each page.
 */
export async function reindexAll(
  ex: Executor,
  progress: (collection: Collection, done: number, total: number) => void | Promise<void>,
): Promise<Record<Collection, number>> {
  const typesense = typesenseEnabled()
  if (typesense) await ensureCollections()
  const totals = { product: 0, brand: 0, retailer: 0 }
  for (const collection of COLLECTIONS) {
    const total = await countRows(ex, collection)
    let after: string | null = null
    for (;;) {
      const ids = await idPage(ex, collection, after, DRAIN_BATCH)
      if (ids.length === 0) break
      await buildSearchDocuments(ex, collection, ids)
      if (typesense)
        for (let i = 0; i < ids.length; i += TYPESENSE_BATCH)
          await pushDocuments(ex, collection, ids.slice(i, i + TYPESENSE_BATCH))
      totals[collection] += ids.length
      after = ids.at(-1)!
      await progress(collection, totals[collection], total)
    }
  }
  await removeOrphanDocuments(ex)
  await rebuildSearchWords(ex)
  return totals
}
