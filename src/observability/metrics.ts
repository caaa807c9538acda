import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'

/**
 * The process's Prometheus metrics (prom-client), served by GET /metrics (routes.ts). Labels are
 * bounded sets only (route templates, status codes, outcomes, queue names): never an organization,
 * a key, a GTIN or a raw path, so the text says nothing about any one tenant. Counters made here
 * count what this process did; what the database knows (queues, endpoints, imports, pool) is read
 * when scraped (collectors.ts), so every process reports the same totals for those.
 */
export const registry = new Registry()
registry.setDefaultLabels({ service: 'gtin-catalog' })
// process CPU, memory, file descriptors and event-loop lag, as every Node exporter has them
collectDefaultMetrics({ register: registry, prefix: 'gtin_' })
// ...less V8's heap spaces: under Bun (JavaScriptCore) v8.getHeapSpaceStatistics() is an emulation
// that walks the heap, 20-200 ms of a blocked event loop per scrape (measured: it was most of a
// scrape's time), for spaces JavaScriptCore does not have. The heap's size and use stay
// (gtin_nodejs_heap_size_total_bytes, gtin_nodejs_heap_size_used_bytes).
for (const space of ['total', 'used', 'available'])
  registry.removeSingleMetric(`gtin_nodejs_heap_space_size_${space}_bytes`)

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const requestDuration = new Histogram({
  name: 'gtin_http_request_duration_seconds',
  help: 'HTTP requests by method, route template (unmatched: no route) and status, from arrival to response',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS,
  registers: [registry],
})

const resolutions = new Counter({
  name: 'gtin_resolver_resolutions_total',
  help: 'GS1 Digital Link scans by outcome: redirect (307), linkset (200/304), multiple (300), not_found (404), refused (other 4xx), error (5xx)',
  labelNames: ['outcome'] as const,
  registers: [registry],
})

const searchDuration = new Histogram({
  name: 'gtin_search_duration_seconds',
  help: 'Catalog searches by backend (postgres, typesense) and the tier of the first row (gtin, fulltext, substring, fuzzy; none: no rows)',
  labelNames: ['backend', 'tier'] as const,
  buckets: SECONDS,
  registers: [registry],
})

const deliveryAttempts = new Counter({
  name: 'gtin_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts made by this process, by outcome: succeeded (2xx), http_error (other status), timeout, refused (target failed the SSRF checks), connection_error',
  labelNames: ['outcome'] as const,
  registers: [registry],
})

type Observer = { observe: (value: number) => void }
/** Labelled children, kept: prom-client hashes the labels on every `labels()` call. */
const requestChildren = new Map<string, Observer>()

/** One request served: `route` is the matched route's template ('unmatched' when none). */
export function observeRequest(method: string, route: string, status: number, seconds: number) {
  const key = `${method} ${status} ${route}`
  let child = requestChildren.get(key)
  if (!child) {
    child = requestDuration.labels(method, route, String(status))
    requestChildren.set(key, child)
  }
  child.observe(seconds)
}

const OUTCOMES: Record<number, string> = {
  200: 'linkset',
  304: 'linkset',
  307: 'redirect',
  300: 'multiple',
  404: 'not_found',
}
const resolutionChildren = new Map<number, { inc: () => void }>()
/** A Digital Link scan's answer, by its status (the resolver's hot path: children kept by status). */
export function observeResolution(status: number) {
  let child = resolutionChildren.get(status)
  if (!child) {
    child = resolutions.labels(OUTCOMES[status] ?? (status >= 500 ? 'error' : 'refused'))
    resolutionChildren.set(status, child)
  }
  child.inc()
}

/** One catalog search: its backend, the tier of its first row, and how long it took. */
export function observeSearch(backend: 'postgres' | 'typesense', tier: string | undefined, seconds: number) {
  searchDuration.observe({ backend, tier: tier ?? 'none' }, seconds)
}

/** One webhook POST's outcome (`error`: the sender's reason when no response came). */
export function observeDeliveryAttempt(status: number | null, error: string | null) {
  const outcome =
    status !== null
      ? status >= 200 && status < 300
        ? 'succeeded'
        : 'http_error'
      : error?.startsWith('timed out')
        ? 'timeout'
        : error?.startsWith('refused')
          ? 'refused'
          : 'connection_error'
  deliveryAttempts.inc({ outcome })
}
