import DataLoader from 'dataloader'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../db/schema'
import { type Tx, transaction } from '../db/tx'
import { emit } from '../events/outbox'
import { eventBody } from '../events/types'
import { type TargetPolicy, targetPolicy } from '../shared/outbound'
import { countFailure } from './circuit'
import { parkDeliveries } from './deliveries'
import { type EndpointRow, toEndpointResource } from './endpoints'
import { nextRetryDelayMs } from './retry-schedule'
import { type PostResult, postToTarget } from './sender'
import { signatureHeader } from './signature'

export type AttemptOptions = { now?: () => Date; policy?: TargetPolicy }

/** The deliveries of the jobs fetched together, read in one statement. */
const loadDelivery = new DataLoader<string, Loaded | null>(
  async (ids) => {
    const rows = await db
      .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: events })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(inArray(webhookDeliveries.id, [...ids]))
    const byId = new Map(rows.map((row) => [row.delivery.id, row]))
    return ids.map((id) => byId.get(id) ?? null)
  },
  { cache: false, maxBatchSize: 200 },
)
type Loaded = {
  delivery: typeof webhookDeliveries.$inferSelect
  endpoint: EndpointRow
  event: typeof events.$inferSelect
}

/**
 * Makes the attempt the dispatcher claimed (with `token`): signs the event's body at the moment of
 * sending, POSTs it, and records the outcome. Nothing happens when the claim is stale (the
 * delivery's token changed, or it is settled); a delivery whose endpoint is switched off waits
 * without a schedule until the endpoint is switched on. A worker that dies mid-attempt leaves the
 * delivery leased; once the lease passes it is claimed again: receivers may see an event twice
 * and deduplicate by its id.
 */
export async function attemptDelivery(deliveryId: string, token: string, options: AttemptOptions = {}) {
  const now = options.now ?? (() => new Date())
  const found = await loadDelivery.load(deliveryId)
  if (!found) return
  const { delivery, endpoint, event } = found
  const current = and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.jobToken, token))
  if (delivery.jobToken !== token) return
  if (endpoint.deletedAt) {
    await db
      .update(webhookDeliveries)
      .set({ status: 'cancelled', jobToken: null, nextAttemptAt: null, leaseUntil: null })
      .where(current)
    return
  }
  if (!endpoint.isActive) {
    await db.update(webhookDeliveries).set({ jobToken: null, leaseUntil: null }).where(current)
    return
  }
  const attempt = delivery.attempts + 1
  const payload = eventBody(event)
  const body = JSON.stringify(payload)
  const sentAt = now()
  const result = await postToTarget(
    endpoint.url,
    body,
    {
      'content-type': 'application/json',
      'user-agent': 'gtin-catalog-webhooks/1',
      'x-service-signature': signatureHeader(
        { secret: endpoint.signingSecret, previousSecret: endpoint.previousSecret, rotatedAt: endpoint.rotatedAt },
        body,
        sentAt,
      ),
      'x-service-event-id': payload.id,
      'x-service-event-type': event.eventType,
      'x-service-delivery-attempt': String(attempt),
    },
    options.policy ?? targetPolicy(),
    config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    event.traceParent,
  )
  const at = now()
  // the common case in one statement; a failure also schedules the next attempt and tracks health
  const outcome = { deliveryId: delivery.id, token, attempt, endpoint, result, at }
  if (succeeded(result)) await recordSuccess(outcome)
  else await transaction((tx) => recordFailure(tx, outcome))
}

/** What one attempt came to, for the records. */
type Outcome = {
  deliveryId: string
  token: string
  attempt: number
  endpoint: EndpointRow
  result: PostResult
  at: Date
}

type Success = {
  deliveryId: string
  endpointId: string
  token: string
  attempt: number
  status: number
  latencyMs: number
  at: Date
}

/**
 * Successes settle in batches: those that finish within 5 ms of each other are written in one
 * statement (the delivery settled, its attempt logged, and the circuits of their endpoints closed),
 * which is what lets one worker keep thousands of deliveries a second going on a small machine: a
 * statement per delivery (the circuit's, once) cost more than the POST. A success closes its endpoint's
 * circuit, decided by the endpoint row as it is now, not as it was when the attempt started (other
 * attempts may have failed and opened it meanwhile); a healthy endpoint's row is not written.
 */
const settleSuccesses = new DataLoader<Success, true>(
  async (list) => {
    const rows = list.map((s) => ({ ...s, at: s.at.toISOString() }))
    await db.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          as x("deliveryId" uuid, "endpointId" uuid, token uuid, attempt int, status int, "latencyMs" int, at timestamptz)),
      settled as (
        update webhook_deliveries d set status = 'succeeded', attempts = i.attempt, last_attempt_at = i.at,
          response_status = i.status, job_token = null, next_attempt_at = null, lease_until = null
        from input i where d.id = i."deliveryId" and d.job_token = i.token
        returning d.id, i.attempt, i.status, i."latencyMs", i.at),
      closed as (
        update webhook_endpoints e set failing_since = null, consecutive_failures = 0, circuit_open_until = null
        where e.id in (select "endpointId" from input)
          and (e.consecutive_failures > 0 or e.circuit_open_until is not null or e.failing_since is not null))
      insert into webhook_attempts (delivery_id, attempt, response_status, latency_ms, created)
      select id, attempt, status, "latencyMs", at from settled`)
    return list.map(() => true as const)
  },
  { cache: false, maxBatchSize: 500, batchScheduleFn: (run) => setTimeout(run, 5) },
)

async function recordSuccess({ deliveryId, token, attempt, endpoint, result, at }: Outcome) {
  await settleSuccesses.load({
    deliveryId,
    endpointId: endpoint.id,
    token,
    attempt,
    status: result.status!,
    latencyMs: result.latencyMs,
    at,
  })
}

const succeeded = (result: PostResult) => result.status !== null && result.status >= 200 && result.status < 300

/** A failed attempt: the next one scheduled (or the delivery failed), and the endpoint's health and circuit. */
async function recordFailure(tx: Tx, { deliveryId, token, attempt, endpoint, result, at }: Outcome) {
  const delay = nextRetryDelayMs(attempt, result.retryAfter)
  const next = delay === null ? null : { token: crypto.randomUUID(), at: new Date(at.getTime() + delay) }
  const [updated] = await tx
    .update(webhookDeliveries)
    .set({
      status: next ? 'retrying' : 'failed',
      attempts: attempt,
      lastAttemptAt: at,
      responseStatus: result.status,
      jobToken: next?.token ?? null,
      nextAttemptAt: next?.at ?? null,
      leaseUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.jobToken, token)))
    .returning({ id: webhookDeliveries.id })
  // another run of this job recorded it first
  if (!updated) return
  await tx.insert(webhookAttempts).values({
    deliveryId,
    attempt,
    responseStatus: result.status,
    latencyMs: result.latencyMs,
    error: result.error ?? `HTTP ${result.status}`,
    created: at,
  })
  await trackFailure(tx, endpoint, at)
}

/**
 * An endpoint's run of failures (cleared by any success, recordSuccess), which also drives its
 * circuit breaker (circuit.ts): once every attempt has failed for WEBHOOK_DISABLE_AFTER_HOURS
 * (5 days), the endpoint is switched off with a reason, and `webhook_endpoint.disabled` goes to the
 * organization's other endpoints that subscribe to it.
 */
async function trackFailure(tx: Tx, endpoint: EndpointRow, at: Date) {
  const since = await countFailure(tx, endpoint.id, at)
  const limitMs = config.WEBHOOK_DISABLE_AFTER_HOURS * 3600 * 1000
  if (at.getTime() - since.getTime() < limitMs) return
  const [disabled] = await tx
    .update(webhookEndpoints)
    .set({
      isActive: false,
      disabledReason: `every delivery failed since ${since.toISOString()}; switched off after ${config.WEBHOOK_DISABLE_AFTER_HOURS} hours`,
      modified: sql`now()`,
    })
    .where(and(eq(webhookEndpoints.id, endpoint.id), eq(webhookEndpoints.isActive, true)))
    .returning()
  if (disabled) await parkDeliveries(tx, endpoint.id)
  if (disabled)
    await emit(tx, {
      eventType: 'webhook_endpoint.disabled',
      organizationId: disabled.organizationId,
      subjectId: disabled.id,
      data: toEndpointResource(disabled),
    })
}
