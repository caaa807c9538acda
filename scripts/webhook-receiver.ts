// A local webhook receiver for the README's quick start: it listens on loopback, registers itself
// as a webhook endpoint of the organization whose manager key is CATALOG_KEY, asks the service for
// a test delivery, and prints each delivery with its checked signature. Its endpoint is deleted
// when it ends (after --count deliveries, or on Ctrl-C), so no retries pile up for a receiver
// that is gone. Run: npm run -s webhook-receiver -- [--port 8080] [--api URL] [--count N]
// (defaults from WEBHOOK_RECEIVER_PORT and CATALOG_URL when set)
import { parseArgs } from 'node:util'
import { verifyWebhookSignature } from 'gtin-catalog'

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.WEBHOOK_RECEIVER_PORT ?? '8080' },
    api: { type: 'string', default: process.env.CATALOG_URL ?? 'http://localhost:3000' },
    count: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
})
if (values.help) {
  console.log('usage: npm run -s webhook-receiver -- [--port 8080] [--api http://localhost:3000] [--count N]')
  console.log('needs CATALOG_KEY: a manager API key of the organization whose events to receive')
  process.exit(0)
}
const key = process.env.CATALOG_KEY
if (!key) {
  console.error('CATALOG_KEY is not set: export the manager key `org create` printed (see the README quick start)')
  process.exit(2)
}
const count = values.count === undefined ? Number.POSITIVE_INFINITY : Number(values.count)
if (!(count >= 1)) {
  console.error(`--count must be a number of deliveries (1 or more), not ${values.count}`)
  process.exit(2)
}
const api = values.api.replace(/\/$/, '')
// every event an organization can receive; an endpoint with an empty list receives nothing
const EVENT_TYPES = [
  'webhook.test',
  'product.created',
  'product.updated',
  'product.claimed',
  'product.unclaimed',
  'product.recalled',
  'offer.updated',
  'retailer.created',
  'retailer.updated',
  'resolution_rule.created',
  'resolution_rule.updated',
  'resolution_rule.deleted',
  'feed_run.completed',
  'feed_run.failed',
]

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api}/webhooks/api/v1${path}`, {
    method,
    headers: { 'x-api-key': key!, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((error: Error) => {
    console.error(`cannot reach the service at ${api} (${error.message}): is npm start running?`)
    process.exit(1)
  })
  const text = await res.text()
  if (!res.ok) {
    const problem = text.startsWith('{') ? (JSON.parse(text) as { detail?: string }).detail : text
    console.error(`${method} ${path}: ${res.status} ${problem ?? ''}`)
    process.exit(1)
  }
  return text ? (JSON.parse(text) as Record<string, unknown>) : {}
}

let secret = ''
let endpointId = ''
const seen = new Set<string>()
let finishing = false

async function finish(code: number) {
  if (finishing) return
  finishing = true
  if (endpointId) await call('DELETE', `/endpoints/${endpointId}/`)
  server.stop(true)
  process.exit(code)
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(values.port),
  async fetch(request) {
    const body = await request.text() // the raw bytes: the signature covers them exactly
    const valid = secret !== '' && verifyWebhookSignature(secret, request.headers.get('x-service-signature'), body)
    if (!valid) {
      console.log(`refused a request without a valid signature (${body.length} bytes)`)
      return new Response(null, { status: 400 })
    }
    const event = JSON.parse(body) as { id: string; event_type: string; data?: { gtin?: string } }
    // delivery is at least once: an event seen before is acknowledged and not counted again
    if (!seen.has(event.id)) {
      seen.add(event.id)
      const attempt = request.headers.get('x-service-delivery-attempt')
      const about = event.data?.gtin ? ` ${event.data.gtin}` : ''
      console.log(`received ${event.event_type}${about} (event ${event.id}, attempt ${attempt}): signature valid`)
      if (seen.size >= count) setTimeout(() => finish(0), 0)
    }
    return new Response(null, { status: 204 })
  },
})

const url = `http://127.0.0.1:${server.port}/`
const endpoint = await call('POST', '/endpoints/', { url, label: 'quick start receiver', event_types: EVENT_TYPES })
secret = String(endpoint.signing_secret)
endpointId = String(endpoint.id)
console.log(`listening on ${url} as webhook endpoint ${endpointId}; asked for a test delivery`)
await call('POST', `/endpoints/${endpointId}/test/`)
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void finish(0))
