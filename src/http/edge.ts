import { Elysia } from 'elysia'
import { authenticate } from '../accounts/api-keys'
import { AppError, type FieldError } from '../shared/errors'
import { isAdmin } from './auth'
import { decodeComponent, MAX_DEPTH, nestsDeeper, unsafeComponent, unsafeValue } from './input-safety'
import { type Route, RouteTable } from './route-table'
import { requestChunks, UploadBody } from './upload'
import { pathOf } from './url'

/** The JSON body limit of every route that declares no other (`x-json-limit` on its body schema). */
export const JSON_LIMIT = 1024 * 1024
/** How long a client may take to send a JSON body. */
export const BODY_TIMEOUT_MS = 10_000
/**
 * Longest request target (path and query) and header block taken. The process runs with Bun's
 * --max-http-header-size=131072, so heads up to 128 KiB reach this code and are refused as
 * problem+json (414, 431); Bun itself answers a bare 431 past that.
 */
export const URL_LIMIT = 8 * 1024
export const HEADERS_LIMIT = 16 * 1024
/** Upload media types: such a body reaches its route unread (UploadBody), which streams it itself. */
export const UPLOAD_TYPES = new Set([
  'text/csv',
  'application/gzip',
  'application/octet-stream',
  'application/x-ndjson',
  'application/jsonl',
  'text/tab-separated-values',
])
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const INTEGER = /^(0|[1-9][0-9]{0,14})$/
const DECIMAL = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,15})?$/

const isJson = (type: string) => type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type)
const invalid = (error: FieldError) => new AppError('validation_error', `${error.field} ${error.message}`, [error])

/**
 * Elysia reads the path from the 11th character of the URL on, which a 1-3 character Host header
 * shifts; such a request is served again under a neutral host, so the route comes from the path alone.
 */
function misreadHost(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return start !== -1 && start < 11
}

/** 422 for a query parameter that does not decode to safe text, or a number not written in decimal. */
export function checkQuery(url: string, numeric: Map<string, 'integer' | 'number'> | undefined) {
  const q = url.indexOf('?')
  if (q === -1) return
  for (const pair of url.slice(q + 1).split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const rawName = eq === -1 ? pair : pair.slice(0, eq)
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1)
    const nameProblem = unsafeComponent(rawName, 'query')
    if (nameProblem) throw invalid(nameProblem)
    const name = decodeComponent(rawName)
    const problem = unsafeComponent(rawValue, name)
    if (problem) throw invalid(problem)
    const kind = numeric?.get(name)
    if (kind && !(kind === 'integer' ? INTEGER : DECIMAL).test(decodeURIComponent(rawValue)))
      throw invalid({
        field: name,
        message: kind === 'integer' ? 'must be a whole number written in decimal digits' : 'must be a decimal number',
      })
  }
}

function checkPath(path: string) {
  if (!path.includes('%')) return
  for (const segment of path.split('/')) {
    const problem = unsafeComponent(segment, 'path')
    if (problem) throw invalid(problem)
  }
}

let headerBytes = 0
/** Adds one header line's size to headerBytes: one function for every request, no closure made per call. */
const countHeader = (value: string, name: string) => {
  headerBytes += name.length + value.length + 4
}

/** 431 past HEADERS_LIMIT of headers, 414 past URL_LIMIT of path and query, 422 for an unsafe path segment. */
export function checkHead(request: Request, url: string, path: string) {
  headerBytes = 0
  request.headers.forEach(countHeader)
  if (headerBytes > HEADERS_LIMIT)
    throw new AppError('headers_too_large', `the request headers exceed ${HEADERS_LIMIT} bytes`)
  if (url.length - url.indexOf(path) > URL_LIMIT)
    throw new AppError('uri_too_long', `the path and query exceed ${URL_LIMIT} characters`)
  checkPath(path)
}

/** The JSON body's bytes, read incrementally: at most `limit` bytes (413) within BODY_TIMEOUT_MS (408). */
async function readBytes(request: Request, limit: number): Promise<Buffer> {
  const late = () =>
    new AppError('request_timeout', `the request body did not arrive within ${BODY_TIMEOUT_MS / 1000} s`)
  const chunks: Uint8Array[] = []
  for await (const chunk of requestChunks(request, {
    limit,
    tooLarge: () => new AppError('payload_too_large', `the request body exceeds ${limit} bytes`),
    timeoutMs: BODY_TIMEOUT_MS,
    idleMs: BODY_TIMEOUT_MS,
    late,
    stalled: late,
  }))
    chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** The body as UTF-8 text (400 when it is not). */
async function readBody(request: Request, limit: number): Promise<string> {
  const bytes = await readBytes(request, limit)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new AppError('malformed_json', 'the request body is not valid UTF-8')
  }
}

/**
 * Every request passes here before Elysia reads or validates anything (contract §3 and the rules
 * for hostile input): the route is decided from the path alone; a method the path does not have
 * is 405; query strings and path segments must decode to text without NUL or lone surrogates, and
 * numeric query parameters must be plain decimals (422); a request with a body to a route that
 * needs a key is 401 without one, before the body is read; bodies are JSON, at most 1 MiB (or
 * the route's own `x-json-limit`) sent within 10 s, nesting at most 32 levels and holding no NUL, lone surrogate or `__proto__` key; or
 * an upload of a media type the route declares, which is left unread for the route to stream with
 * its own limit (UploadBody): neither Elysia's parsers nor its validators ever walk a file.
 */
export function edge(root: () => { routes: Route[]; handle: (request: Request) => Promise<Response> }) {
  const table = new RouteTable(() => root().routes)
  return new Elysia({ name: 'edge' })
    .onRequest(async ({ request }) => {
      const url = request.url
      if (misreadHost(url)) {
        const path = url.slice(url.indexOf('/', url.indexOf('//') + 2))
        return root().handle(new Request(`http://service.internal${path}`, request))
      }
      const path = pathOf(url)
      checkHead(request, url, path)
      const route = table.match(request.method, path)
      if (!route) {
        const allowed = table.methodsFor(path)
        if (allowed.length && request.method !== 'OPTIONS')
          throw new AppError(
            'method_not_allowed',
            `${request.method} is not allowed here; use ${allowed.join(', ')}`,
            undefined,
            { allow: allowed.join(', ') },
          )
      }
      checkQuery(url, route?.numericQuery)
      if (!WITH_BODY.has(request.method) || !route) return
      const length = request.headers.get('content-length')
      const chunked = request.headers.has('transfer-encoding')
      if (!chunked && (length === null || length === '0')) return
      // who may send a body is decided before it is read
      if (route.access === 'admin' && !isAdmin(request.headers.get('x-admin-token') ?? undefined))
        throw new AppError('not_found', 'no such route')
      const keyNeeded =
        route.access === 'key' ||
        (route.access === 'key-or-admin' && !isAdmin(request.headers.get('x-admin-token') ?? undefined))
      if (keyNeeded && !(await authenticate(request.headers.get('x-api-key') ?? undefined)))
        throw new AppError('unauthenticated', 'send a valid, unrevoked API key in the X-API-Key header')
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
      // an upload's limit is its route's, applied as the route streams it
      const upload = !isJson(type) && route.uploadTypes.includes(type)
      const limit = route.jsonLimit ?? JSON_LIMIT
      if (!upload && length !== null && Number(length) > limit)
        throw new AppError('payload_too_large', `the request body exceeds ${limit} bytes`)
      if (isJson(type) || upload) return
      const accepted = ['application/json', ...route.uploadTypes].join(' or ')
      throw new AppError('unsupported_media_type', `send the body as ${accepted}; got ${type || 'no content type'}`)
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const type = contentType.split(';')[0]!.trim().toLowerCase()
      if (isJson(type)) {
        const route = table.match(request.method, pathOf(request.url))
        const text = await readBody(request, route?.jsonLimit ?? JSON_LIMIT)
        if (text.trim() === '') return {}
        if (nestsDeeper(text))
          throw invalid({ field: 'body', message: `must not nest arrays and objects deeper than ${MAX_DEPTH} levels` })
        let value: unknown
        try {
          value = JSON.parse(text)
        } catch {
          throw new AppError('malformed_json', 'the request body is not valid JSON')
        }
        const problem = unsafeValue(value)
        if (problem) throw invalid(problem)
        return value
      }
      // an upload reaches its route unread (onRequest let through only the types the route declares)
      if (UPLOAD_TYPES.has(type)) return new UploadBody(request, type)
    })
}
