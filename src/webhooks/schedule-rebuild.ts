import { sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { arrayParam } from '../db/params'
import { transaction } from '../db/tx'
import { logger } from '../shared/logger'
import { retrySchedule } from './retry-schedule'

const REBUILD_LOCK = 727_045 // advisory lock id: one rebuild at a time across worker processes

/**
 * The schedule (webhook_pending_deliveries) is an unlogged table: PostgreSQL's crash recovery
 * empties it, and a promoted standby has it empty. Its marker, webhook_schedule_kept, is emptied
 * with it; a worker process that finds the marker missing at start writes a schedule row for every
 * delivery still pending or retrying, then the marker, before its dispatcher claims anything.
 *
 * Each delivery is due when its last attempt's retry delay (without its jitter, or a Retry-After
 * the answer asked for) has passed, at once when it never had an attempt; one whose endpoint is
 * switched off waits for it, as a pause leaves it; one whose endpoint was deleted is due, and its
 * claim cancels it. The deliveries are read `for update`: one a settle or a failed attempt changed
 * meanwhile is read as it is after that change (a succeeded one is not scheduled again, a retry is
 * not scheduled twice: the schedule's key skips those already there, such as a delivery made since
 * the restart). Runs in one transaction: a rebuild that fails leaves no marker and is run again by
 * the next worker's start. Returns how many deliveries it scheduled (0 when the schedule was whole).
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
      for update of d
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
  const timer = setInterval(() => {
    checking ??= rebuildLostSchedule()
      .then(() => undefined)
      .catch((err) => logger.warn({ err }, 'checking the webhook delivery schedule failed; checked again shortly'))
      .finally(() => {
        checking = null
      })
  }, seconds * 1000)
  return async () => {
    clearInterval(timer)
    await checking
  }
}
