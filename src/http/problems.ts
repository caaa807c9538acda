import { Elysia } from 'elysia'
import { AppError, type ErrorCode, type FieldError, STATUS } from '../shared/errors'
import { logger } from '../shared/logger'
import { isUnavailable } from '../shared/unavailable'
import { requestIdOf } from './request-context'
import { fieldErrors } from './validation'

const TITLES: Record<ErrorCode, string> = {
  malformed_json: 'Malformed JSON',
  invalid_digital_link: 'Invalid GS1 Digital Link URI',
  unauthenticated: 'Unauthenticated',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  request_timeout: 'Request timeout',
  gtin_exists: 'GTIN already exists',
  already_claimed: 'Already claimed',
  conflict: 'Conflict',
  gone: 'Gone',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  uri_too_long: 'URI too long',
  validation_error: 'Validation failed',
  invalid_gtin: 'Invalid GTIN',
  date_label_violation: 'Date-label violation',
  rate_limited: 'Too many requests',
  headers_too_large: 'Request header fields too large',
  internal_error: 'Internal server error',
  service_unavailable: 'Service unavailable',
}

export type Problem = {
  type: string
  title: string
  status: number
  code: ErrorCode
  detail: string
  errors?: FieldError[]
  request_id: string
}

export function problemResponse(error: AppError, requestId: string): Response {
  const body: Problem = {
    type: `https://errors.gtin-catalog.dev/${error.code.replaceAll('_', '-')}`,
    title: TITLES[error.code],
    status: STATUS[error.code],
    code: error.code,
    detail: error.message,
    ...(error.errors ? { errors: error.errors } : {}),
    request_id: requestId,
  }
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { 'content-type': 'application/problem+json', 'x-request-id': requestId, ...error.headers },
  })
}

/** Seconds a client is asked to wait before retrying while a dependency is down. */
export const RETRY_AFTER_SECONDS = 5

export const serviceUnavailable = (detail: string) =>
  new AppError('service_unavailable', detail, undefined, { 'retry-after': String(RETRY_AFTER_SECONDS) })

type ElysiaErrorLike = { all?: unknown; error?: unknown; type?: string; cause?: unknown; message?: string }

/** Maps every failure to one problem+json response; unknown errors are logged and left unexplained. */
export function toAppError(code: string | number, error: unknown, requestId: string): AppError {
  if (error instanceof AppError) return error
  const e = (error ?? {}) as ElysiaErrorLike
  switch (code) {
    case 'VALIDATION': {
      if (e.type === 'response') break
      // a schema with transforms (repeatable query parameters) fails in TypeBox's Decode instead,
      // with one value error and no place
      const all = e.all ?? (e.error ? [e.error] : [])
      const errors = fieldErrors(all as Parameters<typeof fieldErrors>[0])
      const on =
        e.type === 'query' || e.type === 'property'
          ? 'query'
          : e.type === 'params'
            ? 'path'
            : e.type === undefined
              ? 'request'
              : 'body'
      const detail = errors.map((f) => `${f.field} ${f.message}`).join('; ') || `invalid ${on}`
      return new AppError('validation_error', `invalid ${on}: ${detail}`, errors)
    }
    case 'PARSE':
      if (e.cause instanceof AppError) return e.cause
      return new AppError('malformed_json', 'the request body is not valid JSON')
    case 'NOT_FOUND':
      return new AppError('not_found', 'no such route')
  }
  // PostgreSQL down or restarting: the request may well succeed shortly (the line is rate-limited)
  if (isUnavailable(error)) {
    logger.warn({ request_id: requestId, err: error }, 'database unavailable; answering 503')
    return serviceUnavailable('the database is unavailable at the moment; retry shortly')
  }
  logger.error({ request_id: requestId, err: error, code }, 'unhandled error')
  return new AppError('internal_error', `an internal error occurred; quote request id ${requestId}`)
}

export const problems = new Elysia({ name: 'problems' }).onError({ as: 'global' }, ({ code, error, set, request }) => {
  const requestId = requestIdOf(request)
  const problem = toAppError(code, error, requestId)
  set.status = problem.status // for the request log
  return problemResponse(problem, requestId)
})
