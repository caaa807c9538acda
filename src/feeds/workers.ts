import type { Job } from 'pg-boss'
import { config } from '../config'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { bind, failingOnLastAttempt } from '../runtime/workers'
import { writeChunk } from './chunks'
import { chunkQueue, deadChunkQueue, deadImportQueue, importQueue, scheduledImportQueue } from './queues'
import { failRun } from './runs'
import { startScheduledImport } from './scheduled'
import { feedSchedules } from './schedules'
import { splitRun } from './split'

const failRunOf = (job: Job<{ runId: string }>) => (reason: string) => failRun(db, job.data.runId, reason)

/**
 * Fair per runner (an organization, or the platform: the jobs' group): a runner's files are read
 * one at a time across all processes, so its queued runs wait for each other, not the other
 * runners'; each process reads up to FEED_IMPORT_CONCURRENCY files (of as many runners) at once.
 */
export const importWorker = bind(
  importQueue,
  async (jobs) => {
    for (const job of jobs)
      await failingOnLastAttempt(job, importQueue, failRunOf(job), 'reading the file', () => splitRun(job.data.runId))
  },
  { work: { pollingIntervalSeconds: 1, localConcurrency: config.FEED_IMPORT_CONCURRENCY, groupConcurrency: 1 } },
)

/**
 * Chunks of one runner written at once across all processes: by default a process's every slot, so
 * a run alone goes at full speed; another run's early chunks still go next (saveChunks's priority).
 */
const chunksPerRunner = config.FEED_CHUNKS_PER_ORGANIZATION ?? config.FEED_CHUNK_CONCURRENCY

/** The heap size past which a written chunk collects the garbage at once (its own and the splitter's). */
const HEAP_COLLECT_BYTES = 160 * 1024 * 1024

export const chunkWorker = bind(
  chunkQueue,
  async (jobs) => {
    for (const job of jobs)
      await failingOnLastAttempt(job, chunkQueue, failRunOf(job), `chunk ${job.data.chunk}`, () =>
        transaction((tx) => writeChunk(tx, job.data.runId, job.data.chunk)),
      )
    // A chunk leaves tens of megabytes of garbage (its rows, statements and events), all dead once
    // it is written. JavaScriptCore's own young collections (bin/serve's heap settings: one after
    // about a tenth of the live heap is allocated) keep up on a quiet machine; a collection asked
    // for after every chunk as well cost 5-10 % of the main thread's time (300,000 rows, alternated:
    // import 17.3-18.2 s against 19.3-19.8, main thread 10.4-11.2 s against 11.5-12.1, peak RSS
    // 365-368 MB against 369-370). On a busy machine the concurrent collector falls behind (the heap
    // of a 200,000-row import grew past 900 MB, nearly all of it garbage), so past HEAP_COLLECT_BYTES
    // the chunk collects synchronously.
    if (process.memoryUsage().heapUsed > HEAP_COLLECT_BYTES) Bun.gc(true)
  },
  {
    // a chunk written in less than a poll does not leave its slot idle the rest of it
    fetchAgainAtOnce: true,
    work: {
      pollingIntervalSeconds: 0.5,
      localConcurrency: config.FEED_CHUNK_CONCURRENCY,
      groupConcurrency: chunksPerRunner,
    },
  },
)

export const scheduledWorker = bind(
  scheduledImportQueue,
  async (jobs) => {
    for (const job of jobs) await startScheduledImport(job.data)
  },
  { schedules: feedSchedules, work: { pollingIntervalSeconds: 2 } },
)

/**
 * A chunk or a file read whose every attempt failed without the handler seeing its last one (the
 * worker was killed, or its heartbeat lost): pg-boss moves it to the dead-letter queue, and its run
 * fails here, so no run stays `running` with nothing in flight. A run already failed keeps its reason.
 */
/** Fails the run of each spent job: `what` names the job's work (a chunk, the file read). */
const failingRuns =
  <P extends { runId: string }>(what: (data: P) => string, attempts: number) =>
  async (jobs: { data: P }[]) => {
    for (const job of jobs)
      await failRun(
        db,
        job.data.runId,
        `${what(job.data)} after ${attempts} attempts (its worker stopped or the database failed each time)`,
      )
  }

export const deadChunkWorker = bind(
  deadChunkQueue,
  failingRuns((data) => `chunk ${data.chunk} was not written`, 1 + (chunkQueue.options.retryLimit ?? 0)),
  { work: { pollingIntervalSeconds: 2 } },
)

export const deadImportWorker = bind(
  deadImportQueue,
  failingRuns(() => 'the file was not read', 1 + (importQueue.options.retryLimit ?? 0)),
  { work: { pollingIntervalSeconds: 2 } },
)
