import type { Job } from 'pg-boss'
import { config } from '../src/config'
import { db } from '../src/db/client'
import { transaction } from '../src/db/tx'
import { writeChunk } from '../src/ingestion/chunks'
import { chunkQueue, importQueue } from '../src/ingestion/queues'
import { failRun } from '../src/ingestion/runs'
import { splitRun } from '../src/ingestion/split'
import type { Binding } from './binding'

const lastAttempt = (job: Job<unknown>, limit: number | undefined) => job.retryCount >= (limit ?? 0)

/** A job's last failure fails its run (with the reason), instead of leaving it running forever. */
async function orFail(
  job: Job<{ runId: string }>,
  limit: number | undefined,
  what: string,
  work: () => Promise<unknown>,
) {
  try {
    await work()
  } catch (err) {
    if (lastAttempt(job, limit))
      await failRun(db, job.data.runId, `${what} failed after ${limit} retries: ${(err as Error).message}`)
    throw err
  }
}

export const feedsImport: Binding = {
  queue: importQueue,
  work: { pollingIntervalSeconds: 1 },
  handle: async (jobs: Job<{ runId: string }>[]) => {
    for (const job of jobs)
      await orFail(job, importQueue.options.retryLimit, 'reading the file', () => splitRun(job.data.runId))
  },
}

export const feedsChunk: Binding = {
  queue: chunkQueue,
  work: { pollingIntervalSeconds: 1, localConcurrency: config.FEED_CHUNK_CONCURRENCY },
  handle: async (jobs: Job<{ runId: string; chunk: number }>[]) => {
    for (const job of jobs)
      await orFail(job, chunkQueue.options.retryLimit, `chunk ${job.data.chunk}`, () =>
        transaction((tx) => writeChunk(tx, job.data.runId, job.data.chunk)),
      )
  },
}
