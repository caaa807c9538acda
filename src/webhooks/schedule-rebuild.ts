import { sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { arrayParam } from '../db/params'
import { type Executor, transaction } from '../db/tx'
import { AppError } from '../shared/errors'
import { logger } from '../shared/logger'
import { retrySchedule } from './retry-schedule'

const REBUILD_LOCK = 727_045 // advisory lock id: one rebuild at a time across worker processes

/**
 * The schedule (webhook_pending_deliveries) is an unlogged table: PostgreSQL's crash recovery
 * empties it, and a promoted standby has it empty. Its marker, webhook_schedule_kept, is emptied
 * with it; a worker process that finds the marker missing (watchSchedule: at its start and every
 * few seconds) writes a schedule row for every delivery still pending or retrying, then the marker.
 *
 * Each delivery is due when its last attempt's retry delay (without its jitter, or a Retry-After
 * the answer asked for) has passed, at once when it never had an attempt; one whose endpoint is
 * switched off waits for it, as a pause leaves it; one whose endpoint was deleted is due, and its
 * claim cancels it. The endpoints are held `for key share`, so one switched on meanwhile is switched
 * on either before the rebuild reads it (its deliveries due) or after it commits (its resume then
 * sees the parked rows). The deliveries are read `for update`: one a settle or a failed attempt changed
 * meanwhile is read as it is after that change (a succeeded one is not scheduled again, a retry is
 * not scheduled twice: the schedule's key skips those already there, such as a delivery made since
 * the restart). Runs in one transaction: a rebuild that fails leaves no marker and is run again at
 * the next check. It reads every delivery (no index on status: a settle is in place only while no
 * index covers what it changes), so it runs beside the dispatcher, never within a start's deadline. Returns how many deliveries it scheduled (0 when the schedule was whole).
 */
export async function rebuildLostSchedule(): Promise<number> {
  // the usual answer, without a transaction or the lock
  if ((await db.execute(sql`select 1 from webhook_schedule_kept`)).rows.length > 0) return 0
  const scheduled = await transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${REBUILD_LOCK})`)
    const kept = await tx.execute(sql`select 1 from webhook_schedule_kept`)
    if (kept.rows.length > 0) return null
    const delays = arrayParam(retrySchedule(), 'float8')
    const rows = await tx.execute(sql`insert into webhook_pending_deliveries
        (delivery_id, endpoint_id, organization_id, event_id, attempts, next_attempt_at)
      select d.id, d.endpoint_id, d.organization_id, d.event_id, d.attempts,
        case when n.is_active or n.deleted_at is not null then
          greatest(now(), coalesce(d.last_attempt_at + make_interval(secs => (${delays})[d.attempts]), now()))
        end
      from webhook_deliveries d join webhook_endpoints n on n.id = d.endpoint_id
      where d.status in ('pending', 'retrying')
      for update of d for key share of n
      on conflict (delivery_id) do nothing`)
    await tx.execute(sql`insert into webhook_schedule_kept default values`)
    return rows.rowCount ?? 0
  })
  if (scheduled !== null)
    logger.warn(
      { scheduled },
      'the webhook delivery schedule was lost (PostgreSQL recovered from a crash, or a standby was promoted): rebuilt from the deliveries still to go out',
    )
  return scheduled ?? 0
}

/**
 * PostgreSQL can recover from a crash (or fail over) while the workers keep running and reconnect:
 * the schedule is then empty until someone rebuilds it. Each worker looks for the marker every
 * WEBHOOK_SCHEDULE_CHECK_SECONDS (one indexless read of a one-row table) and rebuilds when it is
 * gone, so deliveries still to go out wait at most that long after PostgreSQL is back. A check that
 * fails (PostgreSQL still down) is tried again at the next tick; a tick while one runs is skipped.
 * Returns a function that stops the checks and waits for the one in progress.
 */
export function watchSchedule(seconds = config.WEBHOOK_SCHEDULE_CHECK_SECONDS): () => Promise<void> {
  let checking: Promise<void> | null = null
  const check = () => {
    checking ??= rebuildLostSchedule()
      .then(() => undefined)
      .catch((err) => logger.warn({ err }, 'checking the webhook delivery schedule failed; checked again shortly'))
      .finally(() => {
        checking = null
      })
  }
  check()
  const timer = setInterval(check, seconds * 1000)
  return async () => {
    clearInterval(timer)
    await checking
  }
}

/**
 * Refuses (503, retry in a few seconds) while the schedule is lost and not yet rebuilt: what is
 * still to go out is read from it (a recovery skips events already waiting), and an empty schedule
 * would have every waiting event queued again. The marker is written with the rebuild's rows.
 */
export async function requireWholeSchedule(ex: Executor) {
  if ((await ex.execute(sql`select 1 from webhook_schedule_kept`)).rows.length === 0)
    throw new AppError(
      'service_unavailable',
      'the delivery schedule is being rebuilt after a database recovery; try again in a few seconds',
      undefined,
      { 'Retry-After': '5' },
    )
}
