import type { Job, PgBoss, WorkOptions } from 'pg-boss'
import type { QueueDef } from '../src/db/queues'
import { withJobSpans } from '../src/observability/tracing'
import { logger } from '../src/shared/logger'

/** A handler bound to a queue a feature declared. */
export type Binding = {
  queue: QueueDef<any>
  work?: WorkOptions
  /** a cron expression: the queue also gets a job on this schedule */
  schedule?: string
  /**
   * Keyed schedules from configuration: each becomes a pg-boss schedule of the queue, and the
   * queue's keyed schedules no longer listed are removed, so the configuration is the whole truth.
   */
  schedules?: () => Promise<{ key: string; cron: string; tz: string; data: object }[]>
  handle: (jobs: any[]) => Promise<unknown>
}

/** Starts a worker; a failing job is logged with its queue and id, then retried by pg-boss. */
export async function bind(boss: PgBoss, { queue, work = {}, handle, schedule, schedules }: Binding) {
  if (schedule) await boss.schedule(queue.name, schedule)
  if (schedules) await syncSchedules(boss, queue.name, await schedules())
  return boss.work(queue.name, work, async (jobs: { id: string; data?: unknown }[]) => {
    try {
      // a span per job, continuing the trace of the request that sent it
      return await withJobSpans(queue.name, jobs, () => handle(jobs))
    } catch (err) {
      logger.error({ err, queue: queue.name, job_ids: jobs.map((j) => j.id) }, 'job failed; pg-boss retries it')
      throw err
    }
  })
}

/**
 * Runs a job's work; when its last retry fails, `fail` records why on what the job was doing (a
 * run, an import), so that never stays "running" forever. The error goes on to pg-boss.
 */
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

export async function failingOnLastAttempt(
  job: Job<unknown>,
  queue: QueueDef<any>,
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

/** Makes a queue's keyed schedules exactly `wanted` (a bad cron or zone throws, naming the key). */
async function syncSchedules(
  boss: PgBoss,
  name: string,
  wanted: Awaited<ReturnType<NonNullable<Binding['schedules']>>>,
) {
  for (const { key, cron, tz, data } of wanted)
    await boss.schedule(name, cron, data, { key, tz }).catch((err: Error) => {
      throw new Error(`schedule ${key}: ${err.message}`)
    })
  const keys = new Set(wanted.map((w) => w.key))
  for (const existing of await boss.getSchedules(name))
    if (existing.key && !keys.has(existing.key)) await boss.unschedule(name, existing.key)
  logger.info({ queue: name, schedules: [...keys] }, 'schedules synced')
}
