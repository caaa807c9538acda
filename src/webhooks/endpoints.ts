import { and, eq, isNull, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { webhookEndpoints } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import type { EventType } from '../events/types'
import { AppError, notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { maskSecret } from '../shared/mask'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { type TargetPolicy, targetPolicy } from '../shared/outbound'
import { type PageQuery, paginate } from '../shared/pagination'
import {
  cancelDeliveries,
  createDeliveries,
  liveEndpoint,
  liveEndpointWhere,
  parkDeliveries,
  resumeDeliveries,
} from './deliveries'
import { newSigningSecret } from './secrets'
import { checkTargetUrl } from './target-url'

export type EndpointRow = typeof webhookEndpoints.$inferSelect

/** The endpoint as the API returns it; the secret in full only on create and rotate. */
export const toEndpointResource = (row: EndpointRow, revealSecret = false) => ({
  id: toShortId(row.id),
  url: row.url,
  label: row.label,
  event_types: row.eventTypes,
  is_active: row.isActive,
  disabled_reason: row.disabledReason,
  signing_secret: revealSecret ? row.signingSecret : maskSecret(row.signingSecret),
  created: row.created.toISOString(),
  modified: row.modified.toISOString(),
  metadata: row.metadata,
})

export type EndpointInput = {
  url?: string
  label?: string
  event_types?: EventType[]
  is_active?: boolean
  metadata?: Metadata | null
}

/** The organization's live endpoint, locked for the rest of the transaction; 404 otherwise. */
export async function lockEndpoint(tx: Tx, organizationId: string, id: string): Promise<EndpointRow> {
  const row = await liveEndpoint(tx, organizationId, id)
  if (!row) throw notFound('webhook endpoint')
  return row
}

export async function createEndpoint(
  ex: Executor,
  organizationId: string,
  input: EndpointInput & { url: string },
  policy: TargetPolicy = targetPolicy(),
) {
  await checkTargetUrl(input.url, policy)
  const [row] = await ex
    .insert(webhookEndpoints)
    .values({
      organizationId,
      url: input.url,
      label: input.label,
      eventTypes: input.event_types,
      isActive: input.is_active,
      metadata: mergeMetadata({}, input.metadata),
      signingSecret: newSigningSecret(),
    })
    .returning()
  return toEndpointResource(row!, true)
}

export function listEndpoints(organizationId: string, filter: { is_active?: boolean }, page: PageQuery) {
  const where = and(
    eq(webhookEndpoints.organizationId, organizationId),
    isNull(webhookEndpoints.deletedAt),
    filter.is_active === undefined ? undefined : eq(webhookEndpoints.isActive, filter.is_active),
  )
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({ endpoint: webhookEndpoints, total_count: sql<number>`count(*) over ()` })
        .from(webhookEndpoints)
        .where(where)
        .orderBy(webhookEndpoints.created, webhookEndpoints.id)
        .limit(limit)
        .offset(offset),
    () => db.$count(webhookEndpoints, where),
    (r) => toEndpointResource(r.endpoint),
  )
}

export async function getEndpoint(organizationId: string, id: string) {
  const [row] = await db.select().from(webhookEndpoints).where(liveEndpointWhere(organizationId, id))
  if (!row) throw notFound('webhook endpoint')
  return toEndpointResource(row)
}

/**
 * Partial update (spec #12). Switching an endpoint on sends the deliveries that waited while it
 * was off (paused by a person, or switched off after failing for days); switching it off leaves
 * queued deliveries waiting and stops new events from reaching it.
 */
export function updateEndpoint(
  ex: Executor,
  organizationId: string,
  id: string,
  patch: EndpointInput,
  policy: TargetPolicy = targetPolicy(),
) {
  return inTransaction(ex, async (tx) => {
    if (patch.url !== undefined) await checkTargetUrl(patch.url, policy)
    const row = await lockEndpoint(tx, organizationId, id)
    const given: Partial<EndpointRow> = {
      url: patch.url,
      label: patch.label,
      eventTypes: patch.event_types,
      isActive: patch.is_active,
      metadata: mergeMetadata(row.metadata, patch.metadata),
    }
    const changes = Object.fromEntries(
      Object.entries(given).filter(
        ([column, value]) =>
          value !== undefined && JSON.stringify(value) !== JSON.stringify(row[column as keyof EndpointRow]),
      ),
    ) as Partial<EndpointRow>
    if (Object.keys(changes).length === 0) return toEndpointResource(row)
    const resuming = changes.isActive === true
    // switched on by a person: a fresh start, the circuit closed
    if (resuming)
      Object.assign(changes, {
        disabledReason: null,
        failingSince: null,
        consecutiveFailures: 0,
        circuitOpenUntil: null,
      })
    const [updated] = await tx
      .update(webhookEndpoints)
      .set({ ...changes, modified: sql`now()` })
      .where(eq(webhookEndpoints.id, id))
      .returning()
    if (resuming) await resumeDeliveries(tx, id)
    if (changes.isActive === false) await parkDeliveries(tx, id)
    return toEndpointResource(updated!)
  })
}

/** Deletes an endpoint: its secrets are wiped, its waiting deliveries cancelled, its log kept. */
export function deleteEndpoint(ex: Executor, organizationId: string, id: string) {
  return inTransaction(ex, async (tx) => {
    await lockEndpoint(tx, organizationId, id)
    await tx
      .update(webhookEndpoints)
      .set({
        deletedAt: sql`now()`,
        modified: sql`now()`,
        isActive: false,
        signingSecret: '',
        previousSecret: null,
      })
      .where(eq(webhookEndpoints.id, id))
    await cancelDeliveries(tx, id)
  })
}

/** A new secret, returned in full; the old one keeps signing `v1old=` for 24 hours. */
export function rotateSecret(ex: Executor, organizationId: string, id: string) {
  return inTransaction(ex, async (tx) => {
    const row = await lockEndpoint(tx, organizationId, id)
    const [updated] = await tx
      .update(webhookEndpoints)
      .set({
        previousSecret: row.signingSecret,
        signingSecret: newSigningSecret(),
        rotatedAt: sql`now()`,
        modified: sql`now()`,
      })
      .where(eq(webhookEndpoints.id, id))
      .returning()
    return toEndpointResource(updated!, true)
  })
}

/**
 * Sends a `webhook.test` event to this endpoint alone, whatever it subscribes to (the event is
 * recorded in the outbox like any other, but fan-out skips its type). The spec enqueues nothing
 * for a switched-off endpoint and delivers nothing to one that subscribes to no type, so both are
 * 409 with nothing recorded rather than a delivery that waits or goes out against those rules.
 */
export function testEndpoint(ex: Executor, organizationId: string, id: string) {
  return inTransaction(ex, async (tx) => {
    const row = await lockEndpoint(tx, organizationId, id)
    if (!row.isActive) throw new AppError('conflict', 'the endpoint is switched off; switch it on first')
    if (row.eventTypes.length === 0)
      throw new AppError('conflict', 'the endpoint subscribes to no event type (`event_types` is empty)')
    const [eventId] = await emit(tx, {
      eventType: 'webhook.test',
      organizationId,
      subjectId: row.id,
      data: { endpoint_id: toShortId(row.id), message: 'This is a test delivery.' },
    })
    const [delivery] = await createDeliveries(tx, [
      { event: { id: eventId!, eventType: 'webhook.test', organizationId }, endpoint: row },
    ])
    return delivery!
  })
}
