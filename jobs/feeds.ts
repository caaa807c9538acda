import type { Job } from 'pg-boss'
import { config } from '../src/config'
import { db } from '../src/db/client'
import { transaction } from '../src/db/tx'
import { writeChunk } from '../src/feeds/chunks'
import { chunkQueue, deadChunkQueue, deadImportQueue, importQueue, scheduledImportQueue } from '../src/feeds/queues'
import { failRun } from '../src/feeds/runs'
import { startScheduledImport } from '../src/feeds/scheduled'
import { feedSchedules, type ScheduledImport } from '../src/feeds/schedules'
import { splitRun } from '../src/feeds/split'
import { type Binding, failingOnLastAttempt } from './binding'

const failRunOf = (job: Job<{ runId: string }>) => (reason: string) => failRun(db, job.data.runId, reason)

/**
 * Fair per runner (an organization, or the platform: the jobs' group): a runner's files are read
 * one at a time across all processes, so its queued runs wait for each other, not the other
 * runners'; each process reads up to FEED_IMPORT_CONCURRENCY files (of as many runners) at once.
 */
export const feedsImport: Binding = {
  queue: importQueue,
  work: { pollingIntervalSeconds: 1, localConcurrency: config.FEED_IMPORT_CONCURRENCY, groupConcurrency: 1 },
  handle: async (jobs: Job<{ runId: string }>[]) => {
    for (const job of jobs)
      await failingOnLastAttempt(job, importQueue, failRunOf(job), 'reading the file', () => splitRun(job.data.runId))
  },
}

/**
 * Chunks of one runner written at once across all processes: by default a process's every slot, so
 * a run alone goes at full speed; another run's early chunks still go next (saveChunk's priority).
 */
const chunksPerRunner = config.FEED_CHUNKS_PER_ORGANIZATION ?? config.FEED_CHUNK_CONCURRENCY

export const feedsChunk: Binding = {
  queue: chunkQueue,
  work: {
    pollingIntervalSeconds: 1,
    localConcurrency: config.FEED_CHUNK_CONCURRENCY,
    groupConcurrency: chunksPerRunner,
  },
  handle: async (jobs: Job<{ runId: string; chunk: number }>[]) => {
    for (const job of jobs)
      await failingOnLastAttempt(job, chunkQueue, failRunOf(job), `chunk ${job.data.chunk}`, () =>
        transaction((tx) => writeChunk(tx, job.data.runId, job.data.chunk)),
      )
    // A chunk leaves tens of megabytes of garbage (its rows, statements and events), all dead once
    // it is written: a collection asked for now (concurrent, not a pause) keeps the heap near its
    // live size. Left to its own pace, the process grew to 500 MB on a 1M-row import.
    Bun.gc(false)
  },
}

export const feedsScheduled: Binding = {
  queue: scheduledImportQueue,
  schedules: feedSchedules,
  work: { pollingIntervalSeconds: 2 },
  handle: async (jobs: Job<ScheduledImport>[]) => {
    for (const job of jobs) await startScheduledImport(job.data)
  },
}

/**
 * A chunk or a file read whose every attempt failed without the handler seeing its last one (the
 * worker was killed, or its heartbeat lost): pg-boss moves it to the dead-letter queue, and its run
 * fails here, so no run stays `running` with nothing in flight. A run already failed keeps its reason.
 */
export const feedsDeadChunk: Binding = {
  queue: deadChunkQueue,
  work: { pollingIntervalSeconds: 2 },
  handle: async (jobs: Job<{ runId: string; chunk: number }>[]) => {
    for (const job of jobs)
      await failRun(
        db,
        job.data.runId,
        `chunk ${job.data.chunk} was not written after ${1 + (chunkQueue.options.retryLimit ?? 0)} attempts (its worker stopped or the database failed each time)`,
      )
  },
}

export const feedsDeadImport: Binding = {
  queue: deadImportQueue,
  work: { pollingIntervalSeconds: 2 },
  handle: async (jobs: Job<{ runId: string }>[]) => {
    for (const job of jobs)
      await failRun(
        db,
        job.data.runId,
        `the file was not read after ${1 + (importQueue.options.retryLimit ?? 0)} attempts (its worker stopped or the database failed each time)`,
      )
  },
}
