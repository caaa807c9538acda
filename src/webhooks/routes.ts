import { Elysia, t } from 'elysia'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { Page } from '../shared/pagination'
import { listDeliveries, recoverEndpoint, recoverySince, resendDelivery, toDeliveryResource } from './deliveries'
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  testEndpoint,
  updateEndpoint,
} from './endpoints'
import {
  Delivery,
  DeliveryParams,
  DeliveryQuery,
  Endpoint,
  EndpointCreate,
  EndpointParams,
  EndpointPatch,
  EndpointQuery,
  NoBody,
  RecoverBody,
  Recovery,
} from './schemas'

const tags = ['Webhooks']
const manager = { role: 'manager' as const }
const scoped = "Manager keys only; another organization's endpoint is 404."

export const webhookRoutes = new Elysia({ name: 'webhooks', prefix: '/webhooks/api/v1' })
  .use(auth)
  .post(
    '/endpoints/',
    async ({ apiKey, body, status }) => status(201, await createEndpoint(db, apiKey.organizationId, body)),
    {
      auth: manager,
      body: EndpointCreate,
      response: { 201: Endpoint, ...errorResponses },
      detail: {
        tags,
        summary: 'Create a webhook endpoint',
        description: `The response carries \`signing_secret\` in full, the only time but rotation it is shown. ${scoped}`,
      },
    },
  )
  .get(
    '/endpoints/',
    ({ apiKey, query }) =>
      listEndpoints(
        apiKey.organizationId,
        { is_active: query.is_active === undefined ? undefined : query.is_active === 'true' },
        query,
      ),
    {
      auth: manager,
      query: EndpointQuery,
      response: { 200: Page(Endpoint), ...errorResponses },
      detail: {
        tags,
        summary: 'List webhook endpoints',
        description: `Oldest first; secrets masked; \`is_active\` filters. ${scoped}`,
      },
    },
  )
  .get('/endpoints/:endpoint_id/', ({ apiKey, params }) => getEndpoint(apiKey.organizationId, params.endpoint_id), {
    auth: manager,
    params: EndpointParams,
    response: { 200: Endpoint, ...errorResponses },
    detail: { tags, summary: 'Get a webhook endpoint', description: `The secret is masked. ${scoped}` },
  })
  .patch(
    '/endpoints/:endpoint_id/',
    ({ apiKey, params, body }) =>
      transaction((tx) => updateEndpoint(tx, apiKey.organizationId, params.endpoint_id, body)),
    {
      auth: manager,
      params: EndpointParams,
      body: EndpointPatch,
      response: { 200: Endpoint, ...errorResponses },
      detail: {
        tags,
        summary: 'Update a webhook endpoint',
        description: `Partial update: omitted fields are untouched; metadata merges; a \`signing_secret\` in the body is 422 (use rotate-secret). \`is_active: false\` pauses: no new events are queued for it and queued deliveries wait; \`is_active: true\` sends what waited, clears \`disabled_reason\` and closes an open circuit. ${scoped}`,
      },
    },
  )
  .delete(
    '/endpoints/:endpoint_id/',
    async ({ apiKey, params, set }) => {
      await transaction((tx) => deleteEndpoint(tx, apiKey.organizationId, params.endpoint_id))
      set.status = 204
    },
    {
      auth: manager,
      params: EndpointParams,
      response: { 204: t.Void({ description: 'deleted' }), ...errorResponses },
      detail: {
        tags,
        summary: 'Delete a webhook endpoint',
        description: `Its deliveries still to go out are cancelled (status \`cancelled\`); the delivery log stays. ${scoped}`,
      },
    },
  )
  .post(
    '/endpoints/:endpoint_id/rotate-secret/',
    ({ apiKey, params }) => transaction((tx) => rotateSecret(tx, apiKey.organizationId, params.endpoint_id)),
    {
      auth: manager,
      params: EndpointParams,
      body: NoBody,
      response: { 200: Endpoint, ...errorResponses },
      detail: {
        tags,
        summary: 'Rotate the signing secret',
        description: `Returns the endpoint with its new secret in full. For 24 hours deliveries carry \`v1=\` signed with the new secret, then the previous secret's signature both as a second \`v1=\` (what Stripe-style verifiers read) and as \`v1old=\`, so receivers can switch without losing events. ${scoped}`,
      },
    },
  )
  .post(
    '/endpoints/:endpoint_id/test/',
    async ({ apiKey, params, status }) =>
      status(
        202,
        toDeliveryResource(await transaction((tx) => testEndpoint(tx, apiKey.organizationId, params.endpoint_id))),
      ),
    {
      auth: manager,
      params: EndpointParams,
      body: NoBody,
      response: { 202: Delivery, ...errorResponses },
      detail: {
        tags,
        summary: 'Send a test event',
        description: `Queues a \`webhook.test\` delivery to this endpoint whatever it subscribes to, and returns it. 409 \`conflict\`, with nothing queued, when the endpoint is switched off (\`is_active: false\`: no new events are queued for it) or subscribes to nothing (\`event_types: []\`: nothing is delivered to it). ${scoped}`,
      },
    },
  )
  .post(
    '/endpoints/:endpoint_id/recover/',
    ({ apiKey, params, body, status }) =>
      transaction((tx) =>
        recoverEndpoint(tx, apiKey.organizationId, params.endpoint_id, recoverySince(body.since)),
      ).then((result) => status(202, result)),
    {
      auth: manager,
      params: EndpointParams,
      body: RecoverBody,
      response: { 202: Recovery, ...errorResponses },
      detail: {
        tags,
        summary: 'Recover an endpoint',
        description: `Queues again every event of the organization, of a type the endpoint subscribes to, created at or after \`since\`, once each (an event already waiting for this endpoint is not queued twice; a \`webhook.test\` event only if it was made for this endpoint); \`queued\` counts them. 409 while the endpoint is switched off. ${scoped}`,
      },
    },
  )
  .get(
    '/deliveries/',
    ({ apiKey, query }) =>
      listDeliveries(apiKey.organizationId, { endpoint_id: query.endpoint_id, status: query.status }, query),
    {
      auth: manager,
      query: DeliveryQuery,
      response: { 200: Page(Delivery), ...errorResponses },
      detail: {
        tags,
        summary: 'List deliveries',
        description:
          'Newest first, each with its attempts (response status, latency, error). Filters: `endpoint_id`, `status`. Failed attempts are retried 30 s, 2 min, 10 min, 1 h, 4 h, 12 h and 24 h after the one before (±10 % jitter; a 429/503 `Retry-After` is honoured up to 24 h), then the delivery is `failed`. An endpoint whose every attempt has failed for 5 days is switched off (`disabled_reason`, event `webhook_endpoint.disabled`). Fair shares: an endpoint has at most 10 attempts in flight and an organization a quarter of the slots of a worker; after 5 failed attempts in a row the circuit of an endpoint opens and its deliveries wait (attempts not counted) until one probe, 30 s later, succeeds. Manager keys only.',
      },
    },
  )
  .post(
    '/deliveries/:delivery_id/retry/',
    ({ apiKey, params, status }) =>
      transaction((tx) => resendDelivery(tx, apiKey.organizationId, params.delivery_id)).then((d) => status(202, d)),
    {
      auth: manager,
      params: DeliveryParams,
      body: NoBody,
      response: { 202: Delivery, ...errorResponses },
      detail: {
        tags,
        summary: 'Resend a delivery',
        description:
          "Queues the delivery's event to its endpoint again as a new delivery (returned), whatever became of the original. 409 when the endpoint is deleted or switched off; another organization's delivery is 404.",
      },
    },
  )
