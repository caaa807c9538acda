import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import pg from 'pg'
import { ADMIN, eventually, PRODUCTS, uniqueGtin } from '../../support/fixtures'
import { ownDatabase } from '../../support/own-database'
import { startServer } from '../../support/process'
import { startReceiver } from '../../support/receiver'

// A traceparent sent with a request is continued into the job and the webhook delivery the request
// causes. Two service processes (development mode, so loopback webhook targets are allowed): one
// exporting its spans over OTLP/HTTP to a real collector stand-in on loopback, one with export off,
// where the received trace must still be carried on.

type Service = { url: string; db: pg.Client; stop: () => Promise<void>; output: () => string }

async function service(prefix: string, env: Record<string, string>): Promise<Service> {
  const database = ownDatabase(prefix)
  await database.create()
  const server = await startServer({
    DATABASE_URL: database.url,
    APP_ENV: 'development',
    NODE_ENV: 'development',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'info',
    ...env,
  })
  const db = new pg.Client({ connectionString: database.url })
  await db.connect()
  return {
    url: server.url,
    db,
    output: server.output,
    stop: async () => {
      server.kill('SIGTERM')
      await server.exited
      await db.end()
      await database.drop()
    },
  }
}

const collector = startReceiver()
const hooks = startReceiver()
let exporting: Service
let silent: Service

beforeAll(async () => {
  ;[exporting, silent] = await Promise.all([
    service('trace_on', { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'catalog-under-test' }),
    service('trace_off', {}),
  ])
}, 60_000)

afterAll(async () => {
  await Promise.all([exporting?.stop(), silent?.stop()])
  collector.stop()
  hooks.stop()
})

const hex = (bytes: number) =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('')

async function send(on: Service, method: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(on.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as any }
}

/** An organization with a webhook endpoint on the hooks receiver for product.created. */
async function subscribed(on: Service) {
  const org = await send(
    on,
    'POST',
    '/account/api/v1/organizations',
    { name: 'Traced', owner_email: `t${Date.now()}@trace.test` },
    ADMIN,
  )
  expect(org.status).toBe(201)
  const key = org.json.api_key.key as string
  const endpoint = await send(
    on,
    'POST',
    '/webhooks/api/v1/endpoints/',
    { url: `${hooks.url}/hook`, event_types: ['product.created'] },
    { 'x-api-key': key },
  )
  expect(endpoint.status).toBe(201)
  return key
}

/** Creates a product with a traceparent; returns what the receiver got for it and the stored rows. */
async function traced(on: Service) {
  const key = await subscribed(on)
  const traceId = hex(16)
  const parentId = hex(8)
  const gtin = uniqueGtin()
  const created = await send(
    on,
    'POST',
    PRODUCTS,
    { gtin, product_name: 'Traced oats' },
    {
      'x-api-key': key,
      traceparent: `00-${traceId}-${parentId}-01`,
    },
  )
  expect(created.status).toBe(201)
  const delivery = await eventually(
    async () => hooks.ofType('product.created').find((r) => r.event.data.gtin === created.json.gtin) ?? null,
  )
  const [event] = (
    await on.db.query(
      `select e.trace_parent from events e join products p on p.id = e.subject_id where p.gtin = $1 and e.event_type = 'product.created'`,
      [`0${gtin}`],
    )
  ).rows
  const jobs = (
    await on.db.query(`select data from pgboss.job where name = 'events.dispatch' and data->>'traceparent' like $1`, [
      `00-${traceId}-%`,
    ])
  ).rows
  return { traceId, parentId, delivery, event, jobs }
}

describe('trace propagation', () => {
  test('exporting: the request, its job and its delivery share the trace; spans reach the collector', async () => {
    const { traceId, parentId, delivery, event, jobs } = await traced(exporting)
    const sent = delivery.headers.traceparent!
    expect(sent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(sent).not.toContain(parentId)
    expect(event.trace_parent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(jobs).toHaveLength(1)

    type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number }
    const spans = await eventually(async () => {
      const all: OtlpSpan[] = collector.received
        .filter((r) => r.event?.resourceSpans)
        .flatMap((r) => r.event.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)))
        .filter((s: OtlpSpan) => s.traceId === traceId)
      const names = all.map((s) => s.name)
      return names.includes('POST /products/api/v1/products') &&
        names.includes('job events.dispatch') &&
        names.includes('webhook POST')
        ? all
        : null
    }, 20_000)
    const request = spans.find((s) => s.name === 'POST /products/api/v1/products')!
    expect(request.parentSpanId).toBe(parentId)
    // the event's stored traceparent is the request's span; the delivery's is the webhook POST span
    expect(event.trace_parent).toContain(request.spanId)
    const post = spans.find((s) => s.name === 'webhook POST')!
    expect(sent).toContain(post.spanId)
    expect(post.parentSpanId).toBe(request.spanId)
    const resource = collector.received.find((r) => r.event?.resourceSpans)!.event.resourceSpans[0].resource
    expect(JSON.stringify(resource)).toContain('catalog-under-test')
    // the request log line carries the trace id
    expect(exporting.output()).toContain(`"trace_id":"${traceId}"`)
  })

  test('export off: a received traceparent still reaches the job and the delivery', async () => {
    const { traceId, delivery, event, jobs } = await traced(silent)
    expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(event.trace_parent).toMatch(new RegExp(`^00-${traceId}-`))
    expect(jobs).toHaveLength(1)
    expect(silent.output()).toContain(`"trace_id":"${traceId}"`)
  })

  test('without a traceparent and export off nothing is traced', async () => {
    const key = await subscribed(silent)
    const gtin = uniqueGtin()
    const created = await send(silent, 'POST', PRODUCTS, { gtin, product_name: 'Plain oats' }, { 'x-api-key': key })
    expect(created.status).toBe(201)
    const delivery = await eventually(
      async () => hooks.ofType('product.created').find((r) => r.event.data.gtin === created.json.gtin) ?? null,
    )
    expect(delivery.headers.traceparent).toBeUndefined()
    const { rows } = await silent.db.query(
      `select e.trace_parent from events e join products p on p.id = e.subject_id where p.gtin = $1`,
      [`0${gtin}`],
    )
    expect(rows).toEqual([{ trace_parent: null }])
  })
})
