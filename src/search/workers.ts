import { bind } from '../runtime/workers'
import { drainSearchMarks } from './marks'
import { DRAIN_JOBS_PER_FETCH, searchIndexQueue } from './queues'

/** Rebuilds the marked rows' search documents in large batches: one drain for the jobs fetched together. */
export const indexWorker = bind(
  searchIndexQueue,
  async (jobs) => {
    await drainSearchMarks(undefined, { now: jobs.some((job) => job.data?.now === true) })
  },
  { work: { pollingIntervalSeconds: 1, batchSize: DRAIN_JOBS_PER_FETCH } },
)
