import { and, eq, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import {
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
  webhookLeases,
  webhookPendingDeliveries,
} from '../db/schema'
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
import { type PostResult, postToTarget } from './sender'
import { signatureHeader } from './signature'
import type { Success } from './successes'

export type AttemptOptions = { now?: () => Date; policy?: TargetPolicy }

/**
 * Makes the attempt the dispatcher claimed (with `claim.token`, the claim carrying the delivery's
 * endpoint and event): signs the event's body at the moment of sending, POSTs it, and records a
 * failure; a success is returned for the dispatcher to settle in a batch (successes.ts). A delivery
 * whose endpoint was deleted is cancelled; one whose endpoint is switched off waits without a
 * schedule until the endpoint is switched on. A worker that dies mid-attempt leaves the delivery
 * leased; once the lease passes it is claimed again: receivers may see an event twice and
 * deduplicate by its id.
 */
export async function attemptDelivery(claim: Claim, options: AttemptOptions = {}): Promise<Success | null> {
  const now = options.now ?? (() => new Date())
  const { id: deliveryId, slot, token, endpoint, event } = claim
  if (endpoint.deleted || !endpoint.isActive) {
    await setAside(claim, endpoint.deleted ? 'cancel' : 'park')
    return null
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
  if (succeeded(result))
    return {
      deliveryId,
      endpointId: endpoint.id,
      slot,
      token,
      attempt,
      status: result.status!,
      latencyMs: result.latencyMs,
      at,
    }
  // a failure schedules the next attempt and tracks the endpoint's health
  await transaction((tx) =>
    recordFailure(tx, { deliveryId, slot, token, attempt, endpointId: endpoint.id, result, at }),
  )
  return null
}

/**
 * A delivery claimed for an endpoint that is gone or off: its slot is freed, and it is cancelled
 * (deleted endpoint) or waits without a next attempt until the endpoint is switched on (parked);
 * nothing when the claim's token is no longer its slot's.
 */
async function setAside(claim: Claim, action: 'cancel' | 'park') {
  const released = sql`update webhook_leases set delivery_id = null, token = null, lease_until = null
    where endpoint_id = ${claim.endpoint.id} and slot = ${claim.slot} and token = ${claim.token} returning 1`
  await db.execute(
    action === 'cancel'
      ? sql`with released as (${released}),
          unscheduled as (delete from webhook_pending_deliveries
            where delivery_id = ${claim.id} and exists (select 1 from released) returning delivery_id)
        update webhook_deliveries d set status = 'cancelled' from unscheduled u where d.id = u.delivery_id`
      : sql`with released as (${released})
        update webhook_pending_deliveries set next_attempt_at = null
        where delivery_id = ${claim.id} and exists (select 1 from released)`,
  )
}

/** What one attempt came to, for the records. */
type Outcome = {
  deliveryId: string
  slot: number
  token: string
  attempt: number
  endpointId: string
  result: PostResult
  at: Date
}

const succeeded = (result: PostResult) => result.status !== null && result.status >= 200 && result.status < 300

/**
 * A failed attempt: its slot freed (after a timeout, held a moment longer: leases.ts), the next
 * attempt scheduled (or the delivery failed and out of the schedule), the endpoint's health and
 * circuit. Nothing when the claim's token is no longer its slot's (its lease lapsed and it was
 * claimed again, or another run recorded it first).
 */
async function recordFailure(tx: Tx, { deliveryId, slot, token, attempt, endpointId, result, at }: Outcome) {
  const delay = nextRetryDelayMs(attempt, result.retryAfter)
  const next = delay === null ? null : new Date(at.getTime() + delay)
  const grace = leaseAfterFailure(result, at)
  const [released] = await tx
    .update(webhookLeases)
    .set({ token: null, leaseUntil: grace, deliveryId: grace ? deliveryId : null })
    .where(and(eq(webhookLeases.endpointId, endpointId), eq(webhookLeases.slot, slot), eq(webhookLeases.token, token)))
    .returning({ slot: webhookLeases.slot })
  if (!released) return
  const scheduled = eq(webhookPendingDeliveries.deliveryId, deliveryId)
  if (next) await tx.update(webhookPendingDeliveries).set({ attempts: attempt, nextAttemptAt: next }).where(scheduled)
  else await tx.delete(webhookPendingDeliveries).where(scheduled)
  await tx
    .update(webhookDeliveries)
    .set({ status: next ? 'retrying' : 'failed', attempts: attempt, lastAttemptAt: at, responseStatus: result.status })
    .where(eq(webhookDeliveries.id, deliveryId))
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
 * An endpoint's run of failures (cleared by any success: successes.ts), which also drives its
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
