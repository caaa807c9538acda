import type { EventType } from '../events/types'

/** A claimed delivery with what its attempt needs: its endpoint as it is now, and its event. */
export type Claim = {
  id: string
  /** the endpoint's slot it holds (webhook_leases) while `token` is that slot's */
  slot: number
  token: string
  /** attempts made before this one */
  attempts: number
  endpoint: ClaimedEndpoint
  /** the event as stored: its body is its type's payload (written by `emit`) */
  event: {
    id: string
    eventType: EventType
    created: Date
    organizationId: string | null
    subjectId: string
    data: unknown
    traceParent: string | null
  }
}
export type ClaimedEndpoint = {
  id: string
  url: string
  signingSecret: string
  previousSecret: string | null
  rotatedAt: Date | null
  isActive: boolean
  deleted: boolean
}

/** A row of the claim's statement (dispatcher.ts). */
export type ClaimRow = {
  id: string
  slot: number
  job_token: string
  attempts: number
  endpoint_id: string
  url: string
  signing_secret: string
  previous_secret: string | null
  rotated_at: Date | null
  is_active: boolean
  deleted: boolean
  event_id: string
  event_type: EventType
  /** epoch milliseconds */
  event_created: number
  organization_id: string | null
  subject_id: string
  data: unknown
  trace_parent: string | null
}

/** The claim's row as the attempt takes it. */
export const toClaim = (r: ClaimRow): Claim => ({
  id: r.id,
  slot: r.slot,
  token: r.job_token,
  attempts: r.attempts,
  endpoint: {
    id: r.endpoint_id,
    url: r.url,
    signingSecret: r.signing_secret,
    previousSecret: r.previous_secret,
    rotatedAt: r.rotated_at,
    isActive: r.is_active,
    deleted: r.deleted,
  },
  event: {
    id: r.event_id,
    eventType: r.event_type,
    created: new Date(r.event_created),
    organizationId: r.organization_id,
    subjectId: r.subject_id,
    data: r.data,
    traceParent: r.trace_parent,
  },
})
