// One tenant's webhook flood against another tenant's delivery (issue 44, finding 4), through the
// HTTP API of a running server in development mode (receivers on loopback) with the admin token:
// organization A points 25 endpoints at a black hole (a receiver that accepts connections and never
// answers) and queues `deliveries` deliveries to them (events fanned out to every endpoint); then
// organization B sends one test delivery to a receiver that answers at once, and the figure is the
// time from B's request to its receipt. Target: under 5 s.
//   bun scripts/bench/isolation-deliveries.ts [--deliveries 30000]
// bench:isolation calls `otherOrganizationDelivery` against its own server.
import { createServer, type Socket } from 'node:net'
import { parseArgs } from 'node:util'

const ENDPOINTS = 25
const HOOKS = '/webhooks/api/v1'

type Called = { status: number; json: any }

function client(base: string) {
  const admin = process.env.ADMIN_TOKEN
  if (!admin)
    throw new Error('isolation-deliveries: ADMIN_TOKEN must be set (the server creates organizations with it)')
  return async (method: string, path: string, body?: unknown, key?: string): Promise<Called> => {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(key ? { 'x-api-key': key } : { 'x-admin-token': admin }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    const called = { status: res.status, json: text ? JSON.parse(text) : null }
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
    return called
  }
}

/** A fresh GTIN-13 with its check digit (prefix 4, an ordinary trade-item range). */
function gtinMaker() {
  let seq = Math.floor(Math.random() * 1e9)
  return () => {
    const body = `4${String(100_000_000_000 + (seq++ % 899_999_999_999)).slice(-11)}`
    let sum = 0
    for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += Number(body[i]) * w
    return body + ((10 - (sum % 10)) % 10)
  }
}

const until = async (check: () => Promise<boolean> | boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`isolation-deliveries: ${what} did not happen in ${ms / 1000} s`)
    await Bun.sleep(20)
  }
}

/**
 * Seconds from organization B's test-delivery request until B's receiver has it, while A has
 * `opts.deliveries` deliveries queued to endpoints that never answer; `queued` is A's count.
 */
export async function otherOrganizationDelivery(
  base: string,
  opts: { deliveries: number; whileQueued?: () => Promise<void> },
): Promise<{ seconds: number; queued: number }> {
  const call = client(base)
  const sockets = new Set<Socket>()
  const blackHole = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((done) => blackHole.listen(0, '127.0.0.1', done))
  let receivedAt = 0
  const receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      receivedAt ||= performance.now()
      return new Response(null, { status: 204 })
    },
  })
  try {
    const stamp = Date.now().toString(36)
    const a = (
      await call('POST', '/account/api/v1/organizations', { name: 'Flood A', owner_email: `a-${stamp}@flood.test` })
    ).json
    const keyA = a.api_key.key as string
    const hole = `http://127.0.0.1:${(blackHole.address() as { port: number }).port}`
    for (let i = 0; i < ENDPOINTS; i++)
      await call('POST', `${HOOKS}/endpoints/`, { url: `${hole}/hook/${i}`, event_types: ['product.created'] }, keyA)
    // each product's event fans out to every endpoint
    const products = Math.ceil(opts.deliveries / ENDPOINTS)
    const gtin = gtinMaker()
    let next = 0
    const creator = async () => {
      while (next < products) {
        next++
        await call('POST', '/products/api/v1/products', { gtin: gtin(), product_name: 'Flood' }, keyA)
      }
    }
    await Promise.all(Array.from({ length: 16 }, creator))
    let queued = 0
    await until(
      async () => {
        queued = (await call('GET', `${HOOKS}/deliveries/?page_size=1`, undefined, keyA)).json.pagination.total_count
        return queued >= products * ENDPOINTS
      },
      300_000,
      `${products * ENDPOINTS} deliveries of A queued`,
    )

    // the caller measures what it wants while A's deliveries sit queued against the black hole
    await opts.whileQueued?.()
    const b = (
      await call('POST', '/account/api/v1/organizations', { name: 'Bystander B', owner_email: `b-${stamp}@flood.test` })
    ).json
    const keyB = b.api_key.key as string
    const endpoint = (
      await call(
        'POST',
        `${HOOKS}/endpoints/`,
        { url: `http://127.0.0.1:${receiver.port}/hook`, event_types: ['webhook.test'] }, // [] would refuse the test (409)
        keyB,
      )
    ).json
    const started = performance.now()
    await call('POST', `${HOOKS}/endpoints/${endpoint.id}/test/`, {}, keyB)
    await until(() => receivedAt > 0, 600_000, "B's test delivery")
    return { seconds: (receivedAt - started) / 1000, queued }
  } finally {
    receiver.stop(true)
    for (const socket of sockets) socket.destroy()
    blackHole.close()
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { deliveries: { type: 'string', default: '30000' } } })
  const { startBenchServer } = await import('./server')
  process.env.ADMIN_TOKEN ??= 'bench-admin-token-0123456789'
  const env = { ADMIN_TOKEN: process.env.ADMIN_TOKEN, NODE_ENV: 'development', APP_ENV: 'development' }
  const bench = await startBenchServer(2, undefined, [], env)
  try {
    const { seconds, queued } = await otherOrganizationDelivery(bench.base, { deliveries: Number(values.deliveries) })
    console.log(
      `isolation-deliveries: other organization's delivery ${seconds.toFixed(2)} s with ${queued} deliveries of one organization queued to a black hole (target < 5 s)`,
    )
  } finally {
    await bench.stop()
  }
  process.exit(0)
}
