import type { Executor } from '../../db/tx'
import type { Collection } from '../types'
import { typesense } from './client'
import { loadDocuments } from './documents'
import { COLLECTIONS } from './schema'

/**
 * Typesense kept in step with the catalog (Typesense mode): every write marks its rows
 * (`src/search/marks.ts`) and the `search.documents` drain sends their documents here after the
 * commit, in imports of up to 500 (`action=upsert`); a Typesense failure rolls the drain's step
 * back, so the marks stay for the retry.
 */

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
