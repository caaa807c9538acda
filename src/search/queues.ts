import { defineQueue } from '../db/queues'

/**
 * Rebuilds the documents of marked rows (`search_index_pending`): one worker drains every mark in
 * large set-based batches, oldest first (`drainSearchMarks`). Stately: at most one job waiting, so
 * the marks of many writers made while one runs are taken by the next.
 */
export const searchIndexQueue = defineQueue<Record<string, never>>('search.index', {
  policy: 'stately',
  retryLimit: 10,
  retryDelay: 5,
  retryBackoff: true,
})
