import { Elysia } from 'elysia'
import { observeRequest, observeResolution } from '../observability/metrics'
import {
  beginRequestSpan,
  endRequestSpan,
  enterRequestContext,
  type RequestTrace,
  traceIdOf,
} from '../observability/tracing'
import { logRequestLine } from '../shared/logger'
import { pathOf } from './url'

const VALID_ID = /^[\w.:-]{1,200}$/
type Context = { began: number; id: string; trace: RequestTrace | null }
const contexts = new WeakMap<Request, Context>()
/** Requests served again inside the app (idempotency.ts): the inner request logs and measures them. */
const delegated = new WeakSet<Request>()

/**
 * `inner` is `outer` served again by the app: it keeps the outer's id, start and span, and only
 * the inner one is logged, measured and traced (with the route it matched).
 */
export function delegateRequest(outer: Request, inner: Request) {
  const context = contexts.get(outer)
  if (context) contexts.set(inner, context)
  delegated.add(outer)
}

/** The X-Request-Id of a request being served ('' outside one). */
export const requestIdOf = (request: Request) => contexts.get(request)?.id ?? ''

/** The request's id: the X-Request-Id the client sent when it is sane, else a new one. */
export function newRequestId(request: Request): string {
  const sent = request.headers.get('x-request-id')
  return sent && VALID_ID.test(sent) ? sent : crypto.randomUUID()
}

/** The route template of the resolver's scans (served outside Elysia) in the metrics. */
const SCAN_ROUTE = '/01/*'

/**
 * The request log's line for one request (`began`: performance.now() when it arrived), and its
 * metrics. The resolver's scans call this directly: they count as resolutions too.
 */
export function logRequest(id: string, method: string, path: string, status: number, began?: number) {
  const elapsed = began === undefined ? undefined : performance.now() - began
  observeRequest(method, SCAN_ROUTE, status, (elapsed ?? 0) / 1000)
  observeResolution(status)
  logRequestLine({ id, method, path, status, durationMs: roundMs(elapsed) })
}

const roundMs = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 100) / 100)

/** X-Request-Id on every response (echoed when the client sent a sane one) and one log line per request. */
export const requestContext = new Elysia({ name: 'request-context' })
  .onRequest(({ request, set }) => {
    const known = contexts.get(request)
    if (known) {
      // a delegated request: the outer one's id and span go on
      if (known.trace) enterRequestContext(known.trace)
      set.headers['x-request-id'] = known.id
      return
    }
    const id = newRequestId(request)
    contexts.set(request, {
      began: performance.now(),
      id,
      trace: beginRequestSpan(request, request.method, pathOf(request.url)),
    })
    set.headers['x-request-id'] = id
  })
  .onAfterResponse({ as: 'global' }, ({ request, set, path, route, responseValue }) => {
    if (delegated.has(request)) return
    const context = contexts.get(request)
    const status =
      responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200
    const elapsed = context ? performance.now() - context.began : undefined
    const template = route || 'unmatched'
    observeRequest(request.method, template, status, (elapsed ?? 0) / 1000)
    if (template.startsWith('/01/')) observeResolution(status)
    if (context?.trace) endRequestSpan(context.trace, request.method, template, status)
    const traceId = traceIdOf(context?.trace)
    logRequestLine({
      id: context?.id ?? '',
      method: request.method,
      path,
      status,
      durationMs: roundMs(elapsed),
      traceId,
    })
  })
