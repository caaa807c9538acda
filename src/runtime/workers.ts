import type { Job, WorkOptions } from 'pg-boss'
import type { QueueDef, QueueSpec } from '../db/queues'

/** A keyed schedule of a queue (pg-boss schedule key, cron, time zone, the job's data). */
export type KeyedSchedule = { key: string; cron: string; tz: string; data: object }

/**
 * A handler bound to a queue its feature declared: a value the feature lists in its index, which
 * the runtime starts in worker processes (src/runtime/start-workers.ts). Made only by `bind`.
 */
export type Worker = {
  queue: QueueSpec
  work: WorkOptions
  /** a cron expression: the queue also gets a job on this schedule */
  schedule?: string
  /**
   * Keyed schedules from configuration: each becomes a pg-boss schedule of the queue, and the
   * queue's keyed schedules no longer listed are removed, so the configuration is the whole truth.
   */
  schedules?: () => Promise<KeyedSchedule[]>
  /**
   * After a batch that succeeded, its worker fetches again at once instead of after its poll
   * (pg-boss waits out the rest of `pollingIntervalSeconds` after a batch shorter than it). For
   * queues whose jobs come in runs (a feed's chunks): a chunk slot idle for the rest of a poll was
   * a tenth of an import's chunk slots.
   */
  fetchAgainAtOnce?: boolean
  /** Runs a fetched batch of the queue's jobs (the handler given to `bind`). */
  run: (jobs: Job<object>[]) => Promise<unknown>
}

export type WorkerOptions = Omit<Worker, 'queue' | 'run' | 'work'> & { work?: WorkOptions }

/**
 * Binds a handler to a queue: the handler takes the jobs as the queue's declaration types them, so
 * a handler and the queue's senders cannot drift apart (both are checked against `P`).
 */
export function bind<P extends object>(
  queue: QueueDef<P>,
  handle: (jobs: Job<P>[]) => Promise<unknown>,
  { work = {}, ...options }: WorkerOptions = {},
): Worker {
  // the queue's jobs were sent through QueueDef<P> (send, insert): they carry P
  return { queue, work, ...options, run: (jobs) => handle(jobs as Job<P>[]) }
}

/**
 * Why a job failed, as its owner may read it (a run's `error`): a database error is named by its
 * SQLSTATE, never by its message, which quotes the SQL and its values (the log has the whole error).
 */
function publicReason(err: unknown): string {
  const e = err as { code?: unknown; severity?: unknown; query?: unknown; cause?: unknown; message?: unknown }
  const pg = (e?.cause ?? e) as { code?: unknown; severity?: unknown }
  if (e?.query !== undefined || pg?.severity !== undefined)
    return `a database error${typeof pg?.code === 'string' ? ` (SQLSTATE ${pg.code})` : ''}`
  return typeof e?.message === 'string' ? e.message : String(err)
}

/**
 * Runs a job's work; when its last retry fails, `fail` records why on what the job was doing (a
 * run, an import), so that never stays "running" forever. The error goes on to pg-boss.
 */
export async function failingOnLastAttempt(
  job: Job<object>,
  queue: QueueSpec,
  fail: (reason: string) => Promise<unknown>,
  what: string,
  work: () => Promise<unknown>,
) {
  try {
    await work()
  } catch (err) {
    const limit = queue.options.retryLimit ?? 0
    if (job.retryCount >= limit) await fail(`${what} failed after ${limit} retries: ${publicReason(err)}`)
    throw err
  }
}
