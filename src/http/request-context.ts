import { Elysia } from 'elysia'
import { logger } from '../shared/logger'

const VALID_ID = /^[\w.:-]{1,200}$/
const started = new WeakMap<Request, number>()

/** X-Request-Id on every response (echoed when the client sent a sane one) and one log line per request. */
export const requestContext = new Elysia({ name: 'request-context' })
  .onRequest(({ request, set }) => {
    started.set(request, performance.now())
    const sent = request.headers.get('x-request-id')
    set.headers['x-request-id'] = sent && VALID_ID.test(sent) ? sent : crypto.randomUUID()
  })
  .onAfterResponse({ as: 'global' }, ({ request, set, path, responseValue }) => {
    if (!logger.isLevelEnabled('info')) return
    const began = started.get(request)
    logger.info({
      request_id: set.headers['x-request-id'],
      method: request.method,
      path,
      status:
        responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200,
      duration_ms: began === undefined ? undefined : Math.round((performance.now() - began) * 100) / 100,
    })
  })
