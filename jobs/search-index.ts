import { drainSearchMarks, searchIndexQueue } from '../src/search'
import type { Binding } from './binding'

/** Rebuilds the marked rows' search documents in large batches (the queue keeps one job waiting). */
export const searchIndex: Binding = {
  queue: searchIndexQueue,
  work: { pollingIntervalSeconds: 1 },
  handle: async () => {
    await drainSearchMarks()
  },
}
