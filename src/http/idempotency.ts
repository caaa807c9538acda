import { createHash } from 'node:crypto'
import { Elysia } from 'elysia'
import { authenticate } from '../accounts/api-keys'
import { config } from '../config'
import { AppError } from '../shared/errors'
import { logger } from '../shared/logger'
import { isAdmin } from './auth'
import { BODY_TIMEOUT_MS, JSON_LIMIT } from './edge'
import { type Answer, claimKey, type Fingerprint, type KeyRow, releaseKey, storeAnswer } from './idempotency-store'
import { delegateRequest, requestIdOf } from './request-context'
import { type Route, RouteTable } from './route-table'
import { BODY_IDLE_MS, largestUpload, requestChunks } from './upload'
import { pathOf } from './url'

/**
 * Idempotency keys as Stripe defines them, on every POST. A request with an `Idempotency-Key`
 * header (1-255 printable ASCII characters) from an API key (scope: its organization) or the admin
 * token (scope: the platform) is served once: its response is stored, and for 24 h the same key
 * with the same request (same caller, path and query, content type and body bytes) answers that
 * response again, with `Idempotent-Replayed: true`, without running anything. The same key with
 * another request is 422 (validation_error on the field Idempotency-Key); while the first request
 * still runs, another with its key is 409 `conflict`. Requests without the header, or without
 * credentials, are served as always.
 *
 * Bodies are never held for this: the request is served again inside the app with its body
 * streaming through a SHA-256 hash (uploads stay streamed), and a later request with the key is
 * read through the same hash, chunk by chunk, before its answer. A response is stored only when
 * the route read the whole body and began its work: 5xx answers, and refusals that happen before
 * any work (400, 401, 403, 408, 413, 415, 429, and 422 validation errors) release the key, so the
 * corrected request may use it again. Responses over 8 MiB are not stored either.
 */
const KEY = /^[\x21-\x7e]{1,255}$/
const MAX_STORED_BYTES = 8 * 1024 * 1024
const REFUSED_BEFORE_WORK = new Set([400, 401, 403, 408, 413, 415, 429])
/** Response headers that belong to one response, not to its replays. */
const OWN_HEADERS = new Set(['x-request-id', 'content-length', 'date', 'connection', 'transfer-encoding', 'keep-alive'])

type Root = { routes: Route[]; handle: (request: Request) => Promise<Response> }

/** Requests this plugin serves again inside the app: they pass through it untouched. */
const served = new WeakSet<Request>()

const keyProblem = (message: string) =>
  new AppError('validation_error', `Idempotency-Key ${message}`, [{ field: 'Idempotency-Key', message }])

/** Who the key belongs to: the admin token, or the API key's organization (null: no credentials). */
async function ownerOf(request: Request): Promise<{ scope: string; caller: string } | null> {
  if (isAdmin(request.headers.get('x-admin-token') ?? undefined)) return { scope: 'admin', caller: 'admin' }
  const caller = await authenticate(request.headers.get('x-api-key') ?? undefined)
  return caller ? { scope: `org:${caller.organizationId}`, caller: caller.keyId } : null
}

/** A body streamed through SHA-256: `digest` is null until the whole body has passed. */
function hashedBody(request: Request) {
  const hash = createHash('sha256')
  let bytes = 0
  let complete = request.body === null
  const stream =
    request.body?.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          hash.update(chunk)
          bytes += chunk.byteLength
          controller.enqueue(chunk)
        },
        flush() {
          complete = true
        },
      }),
    ) ?? null
  return { stream, digest: () => (complete ? { hash: hash.digest('hex'), bytes } : null) }
}

/** Whether an answer is kept for replays (see above): the route ran, and did not fail. */
function storable(status: number, body: Buffer, contentType: string): boolean {
  if (status >= 500 || REFUSED_BEFORE_WORK.has(status)) return false
  if (status !== 422 || !contentType.startsWith('application/problem+json')) return true
  try {
    return (JSON.parse(body.toString('utf8')) as { code?: string }).code !== 'validation_error'
  } catch {
    return true
  }
}

function replay(row: KeyRow, requestId: string): Response {
  return new Response(row.responseBody ? new Uint8Array(row.responseBody) : null, {
    status: row.responseStatus!,
    headers: { ...row.responseHeaders, 'idempotent-replayed': 'true', 'x-request-id': requestId },
  })
}

export function idempotency(root: () => Root) {
  const table = new RouteTable(() => root().routes)

  /** A later request with an answered key: its body is hashed as it arrives, then compared. */
  async function answerAgain(request: Request, fp: Fingerprint, row: KeyRow): Promise<Response> {
    if (row.responseStatus === null)
      throw new AppError('conflict', 'a request with this Idempotency-Key is still running')
    const same = row.caller === fp.caller && row.method === fp.method && row.path === fp.path
    const length = request.headers.get('content-length')
    if (!same || row.contentType !== fp.contentType || (length !== null && Number(length) !== row.requestBytes))
      throw keyProblem('was used with another request in the last 24 hours; use a new key for a new request')
    const route = table.match(request.method, pathOf(request.url))
    const limit = route?.uploadTypes.length ? largestUpload() : (route?.jsonLimit ?? JSON_LIMIT)
    const hash = createHash('sha256')
    const late = () => new AppError('request_timeout', 'the request body did not arrive in time')
    for await (const chunk of requestChunks(request, {
      limit,
      tooLarge: () => new AppError('payload_too_large', `the request body exceeds ${limit} bytes`),
      timeoutMs: route?.uploadTypes.length ? config.UPLOAD_TIMEOUT_SECONDS * 1000 : BODY_TIMEOUT_MS,
      idleMs: BODY_IDLE_MS,
      late,
      stalled: late,
    }))
      hash.update(chunk)
    if (hash.digest('hex') !== row.requestHash)
      throw keyProblem('was used with another request body in the last 24 hours; use a new key for a new request')
    return replay(row, requestIdOf(request))
  }

  /** The first request with a key: served once, its answer stored (or the key released). */
  async function serveOnce(request: Request, fp: Fingerprint, token: string): Promise<Response> {
    const body = hashedBody(request)
    const headers = new Headers(request.headers)
    headers.set('x-request-id', requestIdOf(request))
    // a streamed request body needs half duplex (missing from Bun's RequestInit type, present in the DOM's)
    const init: RequestInit & { duplex: 'half' } = {
      method: request.method,
      headers,
      body: body.stream,
      duplex: 'half',
    }
    const inner = new Request(request.url, init)
    served.add(inner)
    delegateRequest(request, inner)
    let response: Response
    try {
      response = await root().handle(inner)
    } catch (err) {
      await releaseKey(fp, token)
      throw err
    }
    const bytes = Buffer.from(await response.arrayBuffer())
    const sent = body.digest()
    const type = response.headers.get('content-type') ?? ''
    const answered = new Response(bytes, { status: response.status, headers: response.headers })
    try {
      if (!sent || bytes.byteLength > MAX_STORED_BYTES || !storable(response.status, bytes, type)) {
        await releaseKey(fp, token)
        return answered
      }
      const kept: Record<string, string> = {}
      response.headers.forEach((value, name) => {
        if (!OWN_HEADERS.has(name)) kept[name] = value
      })
      const answer: Answer = {
        requestHash: sent.hash,
        requestBytes: sent.bytes,
        status: response.status,
        headers: kept,
        body: bytes,
      }
      await storeAnswer(fp, token, answer)
    } catch (err) {
      // the work is done and answered; only its replay is lost (a retry then runs it again)
      logger.warn({ err, request_id: requestIdOf(request) }, 'idempotency key not stored')
    }
    return answered
  }

  return new Elysia({ name: 'idempotency' }).onRequest(async ({ request }) => {
    if (request.method !== 'POST') return
    const key = request.headers.get('idempotency-key')
    if (key === null || served.has(request)) return
    if (!KEY.test(key)) throw keyProblem('must be 1 to 255 printable ASCII characters without spaces')
    const owner = await ownerOf(request)
    if (!owner) return
    const url = request.url
    const fp: Fingerprint = {
      ...owner,
      key,
      method: request.method,
      path: url.slice(url.indexOf('/', url.indexOf('//') + 2)),
      contentType: (request.headers.get('content-type') ?? '').toLowerCase().slice(0, 255),
    }
    const claim = await claimKey(fp)
    return 'token' in claim ? serveOnce(request, fp, claim.token) : answerAgain(request, fp, claim.row)
  })
}
