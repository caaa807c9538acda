import type { Job, JobResult } from 'pg-boss'
import { config } from '../config'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { bind, failingOnLastAttempt } from '../runtime/workers'
import { logger } from '../shared/logger'
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
 * a run alone goes at full speed; another run's early chunks still go next (saveChunk's priority).
 */
const chunksPerRunner = config.FEED_CHUNKS_PER_ORGANIZATION ?? config.FEED_CHUNK_CONCURRENCY

/** The heap size past which a written chunk collects the garbage at once (its own and the splitter's). */
const HEAP_COLLECT_BYTES = 160 * 1024 * 1024

/**
 * Chunks a worker fetches at once, written one after the other. A full batch makes it fetch again
 * at once (pg-boss's burst), where a worker taking one chunk at a time fetched again only a poll
 * (0.5 s) after its last fetch: a chunk written in 300-400 ms left its slot idle the rest of the
 * poll, and two workers could not write more than four chunks a second (10,000 rows).
 */
const CHUNKS_PER_FETCH = 2

export const chunkWorker = bind(
  chunkQueue,
  async (jobs) => {
    // each job settled on its own: one chunk's failure is retried alone, not with its batch
    const results: JobResult[] = []
    for (const job of jobs)
      try {
        await failingOnLastAttempt(job, chunkQueue, failRunOf(job), `chunk ${job.data.chunk}`, () =>
          transaction((tx) => writeChunk(tx, job.data.runId, job.data.chunk)),
        )
        results.push({ id: job.id, status: 'completed' })
      } catch (err) {
        logger.error({ err, queue: chunkQueue.name, job_ids: [job.id] }, 'job failed; pg-boss retries it')
        results.push({
          id: job.id,
          status: 'failed',
          output: { message: err instanceof Error ? err.message : String(err) },
        })
      }
    // A chunk leaves tens of megabytes of garbage (its rows, statements and events), all dead once
    // it is written: a collection asked for now (concurrent, not a pause) keeps the heap near its
    // live size. On a busy machine the concurrent collector falls behind (the heap of a 200,000-row
    // import grew past 900 MB, nearly all of it garbage), so past HEAP_COLLECT_BYTES the chunk
    // collects synchronously.
    Bun.gc(process.memoryUsage().heapUsed > HEAP_COLLECT_BYTES)
    return results
  },
  {
    work: {
      // pg-boss's shortest poll, when the last fetch was not full
      pollingIntervalSeconds: 0.5,
      batchSize: CHUNKS_PER_FETCH,
      burstWhenBatchFull: true,
      perJobResults: true,
      localConcurrency: config.FEED_CHUNK_CONCURRENCY,
      // a fetched batch is active as a whole: a runner's share counts the chunks fetched, not only the one being written
      groupConcurrency: chunksPerRunner * CHUNKS_PER_FETCH,
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
