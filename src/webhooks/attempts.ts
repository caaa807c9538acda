import DataLoader from 'dataloader'
import { and, eq, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../db/schema'
import { type Tx, transaction } from '../db/tx'
import { emit } from '../events/outbox'
import { eventBody } from '../events/types'
import { type TargetPolicy, targetPolicy } from '../shared/outbound'
import { countFailure } from './circuit'
import type { Claim } from './claims'
import { parkDeliveries } from './deliveries'
import { toEndpointResource } from './endpoints'
import { leaseAfterFailure } from './leases'
import { nextRetryDelayMs } from './retry-schedule'
import { inOneRoundTrip, literal } from './round-trip'
import { type PostResult, postToTarget } from './sender'
import { signatureHeader } from './signature'

export type AttemptOptions = { now?: () => Date; policy?: TargetPolicy }

/**
 * Makes the attempt the dispatcher claimed (with `claim.token`, the claim carrying the delivery's
 * endpoint and event): signs the event's body at the moment of sending, POSTs it, and records the
 * outcome. A delivery whose endpoint was deleted is cancelled; one whose endpoint is switched off
 * waits without a schedule until the endpoint is switched on. A worker that dies mid-attempt leaves
 * the delivery leased; once the lease passes it is claimed again: receivers may see an event twice
 * and deduplicate by its id.
 */
export async function attemptDelivery(claim: Claim, options: AttemptOptions = {}) {
  const now = options.now ?? (() => new Date())
  const { id: deliveryId, token, endpoint, event } = claim
  const current = and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.jobToken, token))
  if (endpoint.deleted) {
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
  const attempt = claim.attempts + 1
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
  const outcome = { deliveryId, token, attempt, endpointId: endpoint.id, result, at }
  if (succeeded(result)) await recordSuccess(outcome)
  else await transaction((tx) => recordFailure(tx, outcome))
}

/** What one attempt came to, for the records. */
type Outcome = {
  deliveryId: string
  token: string
  attempt: number
  endpointId: string
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
 * Settles successes, given as one array per column ($1 delivery ids, $2 endpoint ids, $3 tokens,
 * $4 attempts, $5 statuses, $6 latencies, $7 times). `d.id = any($1)` makes the update find its rows
 * by the primary key: joined only to the input, whose size the plan cannot know, a table of tens of
 * thousands of deliveries was read whole for every batch.
 *
 * The successful attempt is recorded on the delivery's own row (its number, time, status and
 * latency), not as a row of webhook_attempts, which keeps the failed ones: the attempt log reads
 * both (deliveries.ts). An attempt row cost an insert into two indexes and a foreign-key check that
 * locked the delivery's row version just written: a fifth of PostgreSQL's work per delivery.
 */
const SETTLE = `
  with input as (
    select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::int[], $6::int[], $7::timestamptz[])
      as x(delivery_id, endpoint_id, token, attempt, status, latency_ms, at)),
  settled as (
    update webhook_deliveries d set status = 'succeeded', attempts = i.attempt, last_attempt_at = i.at,
      response_status = i.status, latency_ms = i.latency_ms, job_token = null, next_attempt_at = null,
      lease_until = null
    from input i where d.id = any($1::uuid[]) and d.id = i.delivery_id and d.job_token = i.token
    returning d.id),
  closed as (
    update webhook_endpoints e set failing_since = null, consecutive_failures = 0, circuit_open_until = null
    where e.id = any($2::uuid[])
      and (e.consecutive_failures > 0 or e.circuit_open_until is not null or e.failing_since is not null))
  select count(*) from settled`

/**
 * Successes settle in batches: those that finish within 5 ms of each other are written in one
 * statement (the delivery settled with its attempt, and the circuits of their endpoints closed),
 * which is what lets one worker keep thousands of deliveries a second going on a small machine: a
 * statement per delivery (the circuit's, once) cost more than the POST. A success closes its endpoint's
 * circuit, decided by the endpoint row as it is now, not as it was when the attempt started (other
 * attempts may have failed and opened it meanwhile); a healthy endpoint's row is not written. In
 * one round trip, its commit not waiting for the disk (round-trip.ts): a settlement lost in a crash
 * is a delivery sent again.
 */
const settleSuccesses = new DataLoader<Success, true>(
  async (list) => {
    const column = (value: (s: Success) => string | number) => literal(`{${list.map(value).join(',')}}`)
    await inOneRoundTrip({
      name: 'webhook_settle',
      types: ['uuid[]', 'uuid[]', 'uuid[]', 'int[]', 'int[]', 'int[]', 'timestamptz[]'],
      text: SETTLE,
      args: [
        column((s) => s.deliveryId),
        column((s) => s.endpointId),
        column((s) => s.token),
        column((s) => s.attempt),
        column((s) => s.status),
        column((s) => s.latencyMs),
        column((s) => s.at.toISOString()),
      ],
    })
    return list.map(() => true as const)
  },
  { cache: false, maxBatchSize: 500, batchScheduleFn: (run) => setTimeout(run, 5) },
)

async function recordSuccess({ deliveryId, token, attempt, endpointId, result, at }: Outcome) {
  await settleSuccesses.load({
    deliveryId,
    endpointId,
    token,
    attempt,
    status: result.status!,
    latencyMs: result.latencyMs,
    at,
  })
}

const succeeded = (result: PostResult) => result.status !== null && result.status >= 200 && result.status < 300

/** A failed attempt: the next one scheduled (or the delivery failed), and the endpoint's health and circuit. */
async function recordFailure(tx: Tx, { deliveryId, token, attempt, endpointId, result, at }: Outcome) {
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
      leaseUntil: leaseAfterFailure(result, at),
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
  await trackFailure(tx, endpointId, at)
}

/**
 * An endpoint's run of failures (cleared by any success, recordSuccess), which also drives its
 * circuit breaker (circuit.ts): once every attempt has failed for WEBHOOK_DISABLE_AFTER_HOURS
 * (5 days), the endpoint is switched off with a reason, and `webhook_endpoint.disabled` goes to the
 * organization's other endpoints that subscribe to it.
 */
async function trackFailure(tx: Tx, endpointId: string, at: Date) {
  const since = await countFailure(tx, endpointId, at)
  const limitMs = config.WEBHOOK_DISABLE_AFTER_HOURS * 3600 * 1000
  if (at.getTime() - since.getTime() < limitMs) return
  const [disabled] = await tx
    .update(webhookEndpoints)
    .set({
      isActive: false,
      disabledReason: `every delivery failed since ${since.toISOString()}; switched off after ${config.WEBHOOK_DISABLE_AFTER_HOURS} hours`,
      modified: sql`now()`,
    })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.isActive, true)))
    .returning()
  if (disabled) await parkDeliveries(tx, endpointId)
  if (disabled)
    await emit(tx, {
      eventType: 'webhook_endpoint.disabled',
      organizationId: disabled.organizationId,
      subjectId: disabled.id,
      data: toEndpointResource(disabled),
    })
}
