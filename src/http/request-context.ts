import { Elysia } from 'elysia'
import { logRequestLine } from '../shared/logger'

const VALID_ID = /^[\w.:-]{1,200}$/
type Context = { began: number; id: string }
const contexts = new WeakMap<Request, Context>()

/** The X-Request-Id of a request being served ('' outside one). */
export const requestIdOf = (request: Request) => contexts.get(request)?.id ?? ''

/** The request's id: the X-Request-Id the client sent when it is sane, else a new one. */
export function newRequestId(request: Request): string {
  const sent = request.headers.get('x-request-id')
  return sent && VALID_ID.test(sent) ? sent : crypto.randomUUID()
}

/** The request log's line for one request (`began`: performance.now() when it arrived). */
export function logRequest(id: string, method: string, path: string, status: number, began?: number) {
  logRequestLine({
    id,
    method,
    path,
    status,
    durationMs: began === undefined ? undefined : Math.round((performance.now() - began) * 100) / 100,
  })
}

/** X-Request-Id on every response (echoed when the client sent a sane one) and one log line per request. */
export const requestContext = new Elysia({ name: 'request-context' })
  .onRequest(({ request, set }) => {
    const id = newRequestId(request)
    contexts.set(request, { began: performance.now(), id })
    set.headers['x-request-id'] = id
  })
  .onAfterResponse({ as: 'global' }, ({ request, set, path, responseValue }) => {
    const context = contexts.get(request)
    const status =
      responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200
    logRequest(context?.id ?? '', request.method, path, status, context?.began)
  })
