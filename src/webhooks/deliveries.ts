import { and, eq, isNull, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { arrayParam, unnestRows } from '../db/params'
import { type DeliveryStatus, webhookDeliveries, webhookEndpoints, webhookPendingDeliveries } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import type { EventType } from '../events/types'
import { AppError, invalidField, notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { type PageQuery, paginate } from '../shared/pagination'
import { requireWholeSchedule } from './schedule-rebuild'

/** The channel a worker's dispatcher listens on: deliveries became due (sent at commit). */
export const DUE_CHANNEL = 'webhook_deliveries_due'

/**
 * Deliveries still to go out are rows of `webhook_pending_deliveries` (their next attempt's time;
 * none while their endpoint is off); the dispatcher (dispatcher.ts) claims the due ones fairly. This
 * wakes it at commit instead of at its next poll; PostgreSQL folds the notifications of one
 * transaction into one.
 */
const announce = (tx: Tx) => tx.execute(sql`select pg_notify(${DUE_CHANNEL}, '')`)

export type DeliveryRow = typeof webhookDeliveries.$inferSelect
/** A delivery with when its next attempt is due (null: settled, or waiting for its endpoint). */
export type ScheduledDeliveryRow = DeliveryRow & { nextAttemptAt: Date | null }
type EventRef = { id: string; eventType: EventType; organizationId: string }

/** An event to send to an endpoint. */
export type DeliveryTarget = { event: EventRef; endpoint: { id: string; isActive: boolean } }

/**
 * Deliveries of events to endpoints, in the caller's transaction, due at once. A delivery to an
 * endpoint that is off waits (no next attempt) until it is on.
 */
export async function createDeliveries(tx: Tx, targets: DeliveryTarget[]): Promise<ScheduledDeliveryRow[]> {
  if (targets.length === 0) return []
  const rows = await tx
    .insert(webhookDeliveries)
    .values(
      targets.map(({ event, endpoint }) => ({
        organizationId: event.organizationId,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.eventType,
      })),
    )
    .returning()
  const scheduled = await tx
    .insert(webhookPendingDeliveries)
    .values(
      rows.map((row, i) => ({
        deliveryId: row.id,
        endpointId: row.endpointId,
        organizationId: row.organizationId,
        eventId: row.eventId,
        nextAttemptAt: targets[i]!.endpoint.isActive ? sql`now()` : null,
      })),
    )
    .returning({
      deliveryId: webhookPendingDeliveries.deliveryId,
      nextAttemptAt: webhookPendingDeliveries.nextAttemptAt,
    })
  if (scheduled.some((r) => r.nextAttemptAt)) await announce(tx)
  const due = new Map(scheduled.map((r) => [r.deliveryId, r.nextAttemptAt]))
  return rows.map((row) => ({ ...row, nextAttemptAt: due.get(row.id) ?? null }))
}

/**
 * createDeliveries for many (fan-out), returning nothing: the rows go as column arrays in one
 * statement (a multi-row VALUES of thousands, and reading every row back, cost more to build and
 * map than the insert took to run). Every endpoint given is active: each delivery is due at once.
 */
export async function queueDeliveries(tx: Tx, targets: DeliveryTarget[]) {
  if (targets.length === 0) return
  await tx.execute(sql`with delivery as (
      insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type)
      select organization_id, endpoint_id, event_id, event_type from ${unnestRows(targets, 't', {
        organization_id: ['uuid', (t) => t.event.organizationId],
        endpoint_id: ['uuid', (t) => t.endpoint.id],
        event_id: ['uuid', (t) => t.event.id],
        event_type: ['text', (t) => t.event.eventType],
      })}
      returning id, endpoint_id, organization_id, event_id)
    insert into webhook_pending_deliveries (delivery_id, endpoint_id, organization_id, event_id, next_attempt_at)
    select id, endpoint_id, organization_id, event_id, now() from delivery`)
  await announce(tx)
}

/** Deliveries still to go out that waited while their endpoint was off: each is due now. */
export async function resumeDeliveries(tx: Tx, endpointId: string) {
  const rows = await tx
    .update(webhookPendingDeliveries)
    .set({ nextAttemptAt: sql`now()` })
    .where(and(eq(webhookPendingDeliveries.endpointId, endpointId), isNull(webhookPendingDeliveries.nextAttemptAt)))
    .returning({ id: webhookPendingDeliveries.deliveryId })
  if (rows.length) await announce(tx)
}

/** A schedule row (`p`) whose delivery is not in flight: no slot of its endpoint holds a running lease on it. */
const notInFlight = sql`not exists (select 1 from webhook_leases l
  where l.endpoint_id = p.endpoint_id and l.delivery_id = p.delivery_id and l.lease_until > now())`

/**
 * A paused endpoint's deliveries wait without a next attempt until it is switched on
 * (resumeDeliveries). One in flight (its lease running) is left alone: its outcome is recorded, and
 * a retry it schedules is parked by the attempt that finds the endpoint off. Touching its row here
 * deadlocked with that record, which locks the row and then the endpoint's, while a pause locks
 * the endpoint's and then the rows: the attempt's record was rolled back, and the delivery stayed
 * `pending` with no attempt logged (the pause test, 1 run in 10).
 */
export async function parkDeliveries(tx: Tx, endpointId: string) {
  await tx.execute(sql`update webhook_pending_deliveries p set next_attempt_at = null
    where p.endpoint_id = ${endpointId} and p.next_attempt_at is not null and ${notInFlight}`)
}

/**
 * A deleted endpoint's deliveries still to go out are cancelled. One in flight (its lease running)
 * is left to its attempt, which records what the receiver answered: cancelling it lost a success
 * the receiver had already acknowledged (the README's receiver deletes its endpoint as soon as the
 * delivery arrives, and its delivery read `cancelled`). If that attempt fails, the next claim finds
 * the endpoint deleted and cancels it then.
 */
export async function cancelDeliveries(tx: Tx, endpointId: string) {
  await tx.execute(sql`with cancelled as (
      delete from webhook_pending_deliveries p
      where p.endpoint_id = ${endpointId} and ${notInFlight}
      returning p.delivery_id)
    update webhook_deliveries d set status = 'cancelled' from cancelled c where d.id = c.delivery_id`)
}

export type AttemptRecord = {
  attempt: number
  at: string
  response_status: number | null
  latency_ms: number
  error: string | null
}

export const toDeliveryResource = (row: ScheduledDeliveryRow, attemptLog: AttemptRecord[] = []) => ({
  id: toShortId(row.id),
  endpoint_id: toShortId(row.endpointId),
  event_id: toShortId(row.eventId),
  event_type: row.eventType,
  status: row.status,
  attempts: row.attempts,
  last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
  next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
  response_status: row.responseStatus,
  created: row.created.toISOString(),
  attempt_log: attemptLog,
})

/**
 * A delivery's attempts: the failed ones are rows of webhook_attempts; a success is recorded on the
 * delivery's own row (its last attempt, with `latency_ms`: attempts.ts). A success settled before
 * that column existed has its row in webhook_attempts and no latency on the delivery.
 */
const attemptLog = sql<AttemptRecord[]>`coalesce((
  select json_agg(json_build_object(
    'attempt', a.attempt, 'at', to_char(a.created at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'response_status', a.response_status, 'latency_ms', a.latency_ms, 'error', a.error) order by a.attempt)
  from (
    select attempt, created, response_status, latency_ms, error
    from webhook_attempts where delivery_id = webhook_deliveries.id
    union all
    select webhook_deliveries.attempts, webhook_deliveries.last_attempt_at, webhook_deliveries.response_status,
      webhook_deliveries.latency_ms, null
    where webhook_deliveries.status = 'succeeded' and webhook_deliveries.latency_ms is not null
  ) a), '[]'::json)`

/** When a listed delivery's next attempt is due, from its schedule (none once it has settled). */
const nextAttemptAt = sql<Date | null>`(select p.next_attempt_at from webhook_pending_deliveries p
  where p.delivery_id = webhook_deliveries.id)`.mapWith(webhookPendingDeliveries.nextAttemptAt)

export type DeliveryFilter = { endpoint_id?: string; status?: DeliveryStatus }

/** The organization's deliveries, newest first, each with its attempts. */
export function listDeliveries(organizationId: string, filter: DeliveryFilter, page: PageQuery) {
  const where = and(
    eq(webhookDeliveries.organizationId, organizationId),
    filter.endpoint_id === undefined ? undefined : eq(webhookDeliveries.endpointId, filter.endpoint_id),
    filter.status === undefined ? undefined : eq(webhookDeliveries.status, filter.status),
  )
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({
          delivery: webhookDeliveries,
          nextAttemptAt,
          attempts: attemptLog,
          total_count: sql<number>`count(*) over ()`,
        })
        .from(webhookDeliveries)
        .where(where)
        .orderBy(sql`${webhookDeliveries.created} desc`, sql`${webhookDeliveries.id} desc`)
        .limit(limit)
        .offset(offset),
    () => db.$count(webhookDeliveries, where),
    (r) => toDeliveryResource({ ...r.delivery, nextAttemptAt: r.nextAttemptAt }, r.attempts),
  )
}

/** The organization's endpoint unless it is deleted (deleted rows stay for the delivery log). */
export const liveEndpointWhere = (organizationId: string, id: string) =>
  and(
    eq(webhookEndpoints.id, id),
    eq(webhookEndpoints.organizationId, organizationId),
    isNull(webhookEndpoints.deletedAt),
  )

/** That endpoint, locked for the rest of the transaction; null when there is none. */
export async function liveEndpoint(tx: Tx, organizationId: string, id: string) {
  const [endpoint] = await tx.select().from(webhookEndpoints).where(liveEndpointWhere(organizationId, id)).for('update')
  return endpoint ?? null
}

/**
 * Resends one delivery's event to its endpoint as a new delivery (with the full retry schedule),
 * whatever became of the original. 409 when the endpoint has been deleted or is switched off.
 */
export function resendDelivery(ex: Executor, organizationId: string, deliveryId: string) {
  return inTransaction(ex, async (tx) => {
    const [original] = await tx
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.organizationId, organizationId)))
    if (!original) throw notFound('delivery')
    const endpoint = await liveEndpoint(tx, organizationId, original.endpointId)
    if (!endpoint) throw new AppError('conflict', 'the endpoint of this delivery has been deleted')
    if (!endpoint.isActive) throw new AppError('conflict', 'the endpoint is switched off; switch it on first')
    const [created] = await createDeliveries(tx, [
      { event: { id: original.eventId, eventType: original.eventType, organizationId }, endpoint },
    ])
    return toDeliveryResource(created!)
  })
}

/** The `since` of a recovery: a date-time with a time zone, not in the future (422 otherwise). */
export function recoverySince(text: string): Date {
  const since = new Date(text)
  if (Number.isNaN(since.getTime()) || since.getTime() > Date.now())
    throw invalidField('since', 'must be an ISO 8601 date-time with a time zone, not in the future')
  return since
}

/**
 * Re-enqueues every event of the organization of a type the endpoint subscribes to, created at or
 * after `since`, once each: an event that already has a delivery to this endpoint waiting or in
 * retry is not queued twice; a `webhook.test` event only when it was made for this endpoint.
 * 409 when the endpoint is switched off.
 */
export function recoverEndpoint(ex: Executor, organizationId: string, endpointId: string, since: Date) {
  return inTransaction(ex, async (tx) => {
    const endpoint = await liveEndpoint(tx, organizationId, endpointId)
    if (!endpoint) throw notFound('webhook endpoint')
    if (!endpoint.isActive) throw new AppError('conflict', 'the endpoint is switched off; switch it on first')
    await requireWholeSchedule(tx)
    const rows = await tx.execute<{ delivery_id: string }>(sql`
      with delivery as (
        insert into webhook_deliveries (organization_id, endpoint_id, event_id, event_type)
        select e.organization_id, ${endpointId}, e.id, e.event_type
        from events e
        where e.organization_id = ${organizationId} and e.created >= ${since.toISOString()}
          and e.event_type = any(${arrayParam(endpoint.eventTypes, 'text')})
          -- a test event is addressed to one endpoint (its subject); never re-send another's
          and (e.event_type <> 'webhook.test' or e.subject_id = ${endpointId})
          and not exists (select 1 from webhook_pending_deliveries p where p.endpoint_id = ${endpointId}
            and p.event_id = e.id)
        order by e.created
        returning id, organization_id, event_id)
      insert into webhook_pending_deliveries (delivery_id, endpoint_id, organization_id, event_id, next_attempt_at)
      select id, ${endpointId}, organization_id, event_id, now() from delivery
      returning delivery_id`)
    if (rows.rows.length) await announce(tx)
    return { endpoint_id: toShortId(endpointId), since: since.toISOString(), queued: rows.rows.length }
  })
}
