import { defineQueue } from '../db/queues'

/**
 * Wakes the drain of marked documents (`search_index_pending`, `search_bulk_marks`; `drainSearchMarks`): a job is sent in
 * each marking writer's transaction, so it exists once the marks are committed. Not a stately (or
 * otherwise deduplicated) queue: its unique index makes a second writer's send wait for the first
 * writer's commit, which serialised concurrent feed chunks (and could deadlock them). A worker takes
 * many waiting jobs at once and drains once for all of them; one finding the marks taken is done at
 * once. `now`: build the bulk writers' held marks too (drainBulkMarksNow). (`search.index`, the
 * stately queue of earlier releases, is no longer sent to.)
 */
export const searchIndexQueue = defineQueue<{ now?: boolean }>(
  'search.documents',
  { retryLimit: 10, retryDelay: 5, retryBackoff: true },
  // jobs left in the stately queue of earlier releases are drained by this worker, then it is retired
  { formerly: ['search.index'] },
)

/** Waiting jobs a worker takes together (one drain for all of them). */
export const DRAIN_JOBS_PER_FETCH = 100
