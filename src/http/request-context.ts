import { Elysia } from 'elysia'
import { logger } from '../shared/logger'

const VALID_ID = /^[\w.:-]{1,200}$/
type Context = { began: number; id: string }
const contexts = new WeakMap<Request, Context>()

/** The X-Request-Id of a request being served ('' outside one). */
export const requestIdOf = (request: Request) => contexts.get(request)?.id ?? ''

/**
 * For a route that builds its own Response: the headers set so far (the request id, …), to be
 * given to that Response, and taken off `set`. Elysia returns a Response as built only while `set`
 * is untouched; otherwise it copies the whole response to merge the headers in.
 */
export function takeSetHeaders(set: { headers: Record<string, unknown> }): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of Object.keys(set.headers)) {
    out[name] = String(set.headers[name])
    delete set.headers[name]
  }
  return out
}

/** X-Request-Id on every response (echoed when the client sent a sane one) and one log line per request. */
export const requestContext = new Elysia({ name: 'request-context' })
  .onRequest(({ request, set }) => {
    const sent = request.headers.get('x-request-id')
    const id = sent && VALID_ID.test(sent) ? sent : crypto.randomUUID()
    contexts.set(request, { began: performance.now(), id })
    set.headers['x-request-id'] = id
  })
  .onAfterResponse({ as: 'global' }, ({ request, set, path, responseValue }) => {
    if (!logger.isLevelEnabled('info')) return
    const context = contexts.get(request)
    logger.info({
      request_id: context?.id,
      method: request.method,
      path,
      status:
        responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200,
      duration_ms: context === undefined ? undefined : Math.round((performance.now() - context.began) * 100) / 100,
    })
  })
