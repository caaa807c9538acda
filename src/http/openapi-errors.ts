import { AppError, type ErrorCode, STATUS } from '../shared/errors'
import type { OperationInfo } from './openapi-operations'
import { problemResponse } from './problems'

/**
 * The error responses of each operation in the OpenAPI document. A route lists `errorResponses`
 * (every status any route may answer); this keeps those its shape can give (a body: 400, 408, 413,
 * 415; a key: 401, 403; a path parameter or the admin token: 404; an upload: 429; every route: 414,
 * 422, 431, 500, 503) and those the operation list adds (409, 429, …). A status a route declares on
 * its own (not through `errorResponses`) is kept as declared. Each is application/problem+json with
 * one example per machine code it can carry, made by the same function that writes real ones.
 */

type Json = Record<string, any>

/** The marker `errorResponses` puts on its schemas: statuses a route may or may not answer. */
export const GENERIC_PROBLEM = 'x-problem-generic'

/** What the document knows of an operation, enough to decide which errors it can answer. */
export type OperationShape = {
  method: string
  path: string
  operationId: string
  security: Json[] | undefined
  hasBody: boolean
  upload: boolean
  info: OperationInfo | undefined
}

const uses = (shape: OperationShape, scheme: string) => (shape.security ?? []).some((s) => scheme in s)
const anonymousToo = (shape: OperationShape) => (shape.security ?? []).some((s) => Object.keys(s).length === 0)

/** Whether a status that every route may list applies to this operation. */
function applies(status: number, shape: OperationShape): boolean {
  const extra = shape.info?.errors ?? []
  if (shape.info?.never?.includes(status)) return false
  if (extra.includes(status)) return true
  switch (status) {
    case 400:
    case 408:
    case 413:
    case 415:
      return shape.hasBody
    case 401:
      return uses(shape, 'ApiKey')
    case 403:
      // a key of too low a role, or of another organization than the path's
      return (
        uses(shape, 'ApiKey') &&
        !anonymousToo(shape) &&
        (shape.method !== 'get' || shape.path.includes('{organization_id}'))
      )
    case 404:
      return shape.path.includes('{') || (uses(shape, 'AdminToken') && !uses(shape, 'ApiKey'))
    case 429:
      return shape.upload
    case 414:
    case 422:
    case 431:
    case 500:
    case 503:
      return true
    default:
      // 405 (a method the path lacks is not this operation), 409, 410: only when listed
      return false
  }
}

/** Codes that only some operations can answer with; every other code of a status goes with it. */
const CODE_SCOPE: Partial<Record<ErrorCode, (shape: OperationShape) => boolean>> = {
  invalid_digital_link: (s) => s.path.startsWith('/01/'),
  malformed_json: (s) => s.hasBody,
  gtin_exists: (s) => s.operationId === 'createProduct',
  already_claimed: (s) => s.operationId === 'claimProduct',
  date_label_violation: (s) => ['createProduct', 'updateProduct'].includes(s.operationId),
  invalid_gtin: (s) =>
    s.path.includes('{gtin}') || ['createProduct', 'generateBarcode', 'createBarcodeBatch'].includes(s.operationId),
}

/** What each code means to a caller, and a detail of the kind the service writes. */
const CODES: Record<ErrorCode, { when: string; detail: string; errors?: { field: string; message: string }[] }> = {
  malformed_json: { when: 'the body is not valid JSON (or not UTF-8)', detail: 'the request body is not valid JSON' },
  invalid_digital_link: {
    when: 'the path is not a valid GS1 Digital Link URI',
    detail: 'not a valid GS1 Digital Link URI: the check digit of 04006381333932 should be 1',
  },
  unauthenticated: {
    when: 'the X-API-Key header is missing, unknown or revoked',
    detail: 'send a valid, unrevoked API key in the X-API-Key header',
  },
  forbidden: {
    when: "the key's role is too low, or the resource belongs to another organization",
    detail: 'this action needs an editor key; this key is readonly',
  },
  not_found: {
    when: 'no such resource, or it belongs to another organization',
    detail: 'product not found',
  },
  method_not_allowed: { when: 'the path has no such method', detail: 'PUT is not allowed here; use GET, PATCH' },
  request_timeout: {
    when: 'the body did not arrive in time',
    detail: 'the request body did not arrive within 10 s',
  },
  gtin_exists: {
    when: 'the GTIN is already in the catalog (claim it instead)',
    detail: '04006381333931 is already in the catalog; claim it instead',
  },
  already_claimed: {
    when: 'another organization holds the GTIN',
    detail: '04006381333931 is claimed by another organization',
  },
  conflict: {
    when: "the resource's state does not allow it now",
    detail:
      '04006381333931 is under a GS1 company prefix registered to another organization; only that organization can claim it',
  },
  gone: { when: 'the resource existed but has expired', detail: "the batch's output was removed after its retention" },
  payload_too_large: { when: 'the body is over its limit', detail: 'the request body exceeds 1048576 bytes' },
  unsupported_media_type: {
    when: 'the body is of a media type the operation does not take',
    detail: 'send the body as application/json; got text/plain',
  },
  uri_too_long: { when: 'the path and query exceed 8 KiB', detail: 'the path and query exceed 8192 characters' },
  validation_error: {
    when: 'a value breaks the schema, a range or a pattern (each field named in `errors`)',
    detail: 'invalid body: product_name must be at most 255 characters',
    errors: [{ field: 'product_name', message: 'must be at most 255 characters' }],
  },
  invalid_gtin: {
    when: 'the GTIN has a wrong length or check digit, or lies in a restricted range',
    detail: 'the check digit of 4006381333932 should be 1',
    errors: [{ field: 'gtin', message: 'the check digit of 4006381333932 should be 1' }],
  },
  date_label_violation: {
    when: 'a text uses a date-label phrase that California AB 660 bans',
    detail: 'product_name uses the banned date label "sell by"',
    errors: [{ field: 'product_name', message: 'uses the banned date label "sell by"' }],
  },
  rate_limited: {
    when: 'a quota is used up: retry after Retry-After seconds',
    detail: 'at most 60 anonymous searches in 60 s from one address; retry in 12 s, or send an API key',
  },
  headers_too_large: {
    when: 'the request headers exceed 16 KiB',
    detail: 'the request headers exceed 16384 bytes',
  },
  internal_error: {
    when: 'an unexpected failure (logged with the request id)',
    detail: 'an internal error occurred; quote request id 6f1c2a4e-9b7d-4c3f-8e21-5a0d9b3c7e14',
  },
  service_unavailable: {
    when: 'the database (or another dependency) is unavailable for a moment: retry after Retry-After seconds',
    detail: 'the database is unavailable at the moment; retry shortly',
  },
}

const REQUEST_ID = '6f1c2a4e-9b7d-4c3f-8e21-5a0d9b3c7e14'

/** Response headers of some statuses, as components. */
export const ERROR_HEADERS: Json = {
  'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': { description: 'requests allowed in the window', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Remaining': { description: 'requests left in the window', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'seconds until the window ends', schema: { type: 'integer', minimum: 0 } },
}
const HEADERS_OF: Record<number, string[]> = {
  429: ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  503: ['Retry-After'],
}

const CODES_OF = new Map<number, ErrorCode[]>()
for (const [code, status] of Object.entries(STATUS) as [ErrorCode, number][])
  CODES_OF.set(status, [...(CODES_OF.get(status) ?? []), code])

/** The body the service writes for `code`, as an example (problemResponse is the only writer). */
async function problemBody(code: ErrorCode): Promise<Json> {
  const { detail, errors } = CODES[code]
  return (await problemResponse(new AppError(code, detail, errors), REQUEST_ID).json()) as Json
}

/** Every code's example body, made once when the document is built. */
export async function problemExamples(): Promise<Map<ErrorCode, Json>> {
  const codes = Object.keys(STATUS) as ErrorCode[]
  return new Map(await Promise.all(codes.map(async (c) => [c, await problemBody(c)] as const)))
}

/**
 * The examples the responses refer to, as components: one per code that some response shows
 * (an unused component would be a lint warning).
 */
export function problemExampleComponents(paths: Json, examples: Map<ErrorCode, Json>): Json {
  const used = new Set(
    [...JSON.stringify(paths).matchAll(/"#\/components\/examples\/(\w+)"/g)].map((m) => m[1] as ErrorCode),
  )
  return Object.fromEntries(
    [...used].sort().map((code) => [code, { summary: CODES[code].when, value: examples.get(code) }]),
  )
}

/** The error responses of one operation: `declared` maps each listed status to its schema. */
export function errorResponses(shape: OperationShape, declared: Record<string, Json>) {
  const out: Record<string, Json> = {}
  for (const [key, schema] of Object.entries(declared)) {
    const status = Number(key)
    if (status < 400) continue
    if (schema[GENERIC_PROBLEM] === true && !applies(status, shape)) continue
    const all = CODES_OF.get(status) ?? []
    const codes = all.filter((c) => CODE_SCOPE[c]?.(shape) ?? true)
    const shown = codes.length ? codes : all
    const headers = HEADERS_OF[status]
    out[key] = {
      description: shown.map((c) => `\`${c}\`: ${CODES[c].when}`).join('; '),
      ...(headers
        ? { headers: Object.fromEntries(headers.map((h) => [h, { $ref: `#/components/headers/${h}` }])) }
        : {}),
      content: {
        'application/problem+json': {
          schema: { $ref: '#/components/schemas/Problem' },
          examples: Object.fromEntries(shown.map((c) => [c, { $ref: `#/components/examples/${c}` }])),
        },
      },
    }
  }
  return out
}
