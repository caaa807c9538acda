import { db } from '../src/db/client'
import { drainIndexMarks, indexQueue } from '../src/search/typesense/sync'
import type { Binding } from './binding'

/** Typesense mode: sends the marked rows' documents in batches (the queue keeps one job waiting). */
export const searchIndex: Binding = {
  queue: indexQueue,
  work: { pollingIntervalSeconds: 1 },
  handle: async () => {
    await drainIndexMarks(db)
  },
}
