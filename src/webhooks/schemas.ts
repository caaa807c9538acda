import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { DELIVERY_STATUSES } from '../db/schema/webhooks'
import { EVENT_TYPES } from '../shared/event-types'
import { Id, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Chars, Enum } from '../shared/schema-types'

const EventTypeList = t.Array(Enum(EVENT_TYPES), {
  uniqueItems: true,
  maxItems: EVENT_TYPES.length,
  description:
    'Event types delivered to this endpoint, listed exactly (no wildcards); an empty list receives nothing, not even a test. `webhook.test` is sent by the test operation whatever a non-empty list holds.',
})

const Url = Chars(2048, {
  minLength: 1,
  description:
    'Where events are POSTed, at most 2048 characters. https:// is required outside development (APP_ENV=development also accepts http:// and loopback hosts); a host that is or resolves to a loopback, private, link-local, unique-local, multicast or metadata address is refused here and again at each delivery. A name that does not resolve yet is accepted. Redirects are not followed.',
})

export const Endpoint = t.Object(
  {
    id: ShortId,
    // read back with the limits they are written with
    url: Chars(2048, { minLength: 1 }),
    label: Chars(255),
    event_types: t.Array(t.String(), { uniqueItems: true, maxItems: EVENT_TYPES.length }),
    is_active: t.Boolean(),
    disabled_reason: t.Union([t.String(), t.Null()], {
      description: 'why the service switched the endpoint off (every delivery failing for 5 days); null otherwise',
    }),
    signing_secret: t.String({
      description:
        'HMAC-SHA256 key (`whsec_` + 43 base64url characters): in full in the responses of create and rotate-secret, otherwise the first 8 characters followed by `...`',
    }),
    created: t.String({ format: 'date-time' }),
    modified: t.String({ format: 'date-time' }),
    metadata: MetadataOut,
  },
  { 'x-schema-name': 'WebhookEndpoint' },
)

export const EndpointCreate = t.Object(
  {
    url: Url,
    label: t.Optional(Chars(255, { description: 'human-readable label, no effect on delivery' })),
    event_types: t.Optional(EventTypeList),
    is_active: t.Optional(t.Boolean({ description: 'default true' })),
    metadata: t.Optional(MetadataIn),
  },
  { additionalProperties: false },
)

export const EndpointPatch = t.Object(
  {
    url: t.Optional(Url),
    label: t.Optional(Chars(255)),
    event_types: t.Optional(EventTypeList),
    is_active: t.Optional(t.Boolean()),
    metadata: t.Optional(MetadataIn),
  },
  {
    additionalProperties: false,
    description: 'Every field optional; omitted fields are untouched. The signing secret changes only by rotation.',
  },
)

export const EndpointQuery = t.Composite([
  PageQuery,
  t.Object({
    is_active: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { error: 'must be true or false' })),
  }),
])

export const EndpointParams = t.Object({ endpoint_id: Id('endpoint_id') })
export const DeliveryParams = t.Object({ delivery_id: Id('delivery_id') })

const ISO_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2})$'
export const RecoverBody = t.Object(
  {
    since: t.String({
      pattern: ISO_TIME,
      description: 'ISO 8601 time with a zone; events created at or after it are sent again',
      error: 'must be an ISO 8601 date-time with a time zone, not in the future',
    }),
  },
  { additionalProperties: false },
)
export const Recovery = t.Object(
  { endpoint_id: ShortId, since: t.String({ format: 'date-time' }), queued: Type.Integer() },
  { 'x-schema-name': 'WebhookRecovery' },
)

const NullableTime = t.Union([t.String({ format: 'date-time' }), t.Null()])
export const Delivery = t.Object(
  {
    id: ShortId,
    endpoint_id: ShortId,
    event_id: ShortId,
    event_type: t.String(),
    status: Enum(DELIVERY_STATUSES, {
      description:
        'pending (not attempted yet), retrying (failed, another attempt scheduled), succeeded, failed (schedule spent), cancelled (its endpoint was deleted)',
    }),
    attempts: Type.Integer(),
    last_attempt_at: NullableTime,
    next_attempt_at: t.Union([t.String({ format: 'date-time' }), t.Null()], {
      description: 'when the next attempt is due; null when settled or while the endpoint is switched off',
    }),
    response_status: t.Union([Type.Integer(), t.Null()]),
    created: t.String({ format: 'date-time' }),
    attempt_log: t.Array(
      t.Object({
        attempt: Type.Integer(),
        at: t.String({ format: 'date-time' }),
        response_status: t.Union([Type.Integer(), t.Null()]),
        latency_ms: Type.Integer(),
        error: t.Union([t.String(), t.Null()]),
      }),
      { description: 'every attempt so far, oldest first' },
    ),
  },
  { 'x-schema-name': 'WebhookDelivery' },
)

export const DeliveryQuery = t.Composite([
  PageQuery,
  t.Object({
    endpoint_id: t.Optional(Id('endpoint_id')),
    status: t.Optional(Enum(DELIVERY_STATUSES)),
  }),
])

/** The operations that take no input: an empty object or no body at all. */
export const NoBody = t.Optional(
  t.Object({}, { additionalProperties: false, description: 'no fields; an empty object or no body' }),
)
