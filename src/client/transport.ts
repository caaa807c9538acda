import type { Problem } from './resources'

export type SdkOptions = {
  /** the service's origin, e.g. `http://localhost:3000` */
  baseUrl: string
  /** sent as X-API-Key */
  apiKey?: string
  /** sent as X-Admin-Token (operator routes) */
  adminToken?: string
  /** more headers for every request */
  headers?: Record<string, string>
  /** the fetch to use (default: the global one) */
  fetch?: typeof fetch
  /** retries of a request answered 429 or 503 (default 3; 0: none) */
  maxRetries?: number
  /** the first back-off when the answer names no Retry-After, doubled on each retry (default 500 ms) */
  retryDelayMs?: number
  /** the longest wait the client accepts; a longer Retry-After is not waited for (default 60 s) */
  maxRetryWaitMs?: number
}

/** A 4xx/5xx answer: its status and the problem details (contract §3) the service sent. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | null,
    readonly response: Response,
  ) {
    super(problem ? `${status} ${problem.code}: ${problem.detail}` : `HTTP ${status}`)
    this.name = 'ApiError'
  }

  get code() {
    return this.problem?.code ?? null
  }
}

type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined | null
export type Query = { [name: string]: QueryValue }

export type RequestOptions = {
  query?: Query
  /** sent as JSON */
  json?: unknown
  /** sent as is, with `contentType` */
  body?: RequestInit['body']
  contentType?: string
  /** the answer as a Blob (files), not parsed JSON */
  blob?: boolean
}

/** Retry-After as milliseconds: seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

const RETRIED = new Set([429, 503])

/**
 * The SDK's one way to the service: JSON in and out, problem+json as ApiError, and a 429 or 503
 * retried after the Retry-After it names (else after an exponential back-off with jitter), up to
 * `maxRetries`. Both statuses mean the service did not do the work, so every method is retried; a
 * POST carries one Idempotency-Key across its retries all the same.
 */
export function transport(options: SdkOptions) {
  const send = options.fetch ?? fetch
  const base = options.baseUrl.replace(/\/+$/, '')
  const maxRetries = options.maxRetries ?? 3
  const firstDelay = options.retryDelayMs ?? 500
  const maxWait = options.maxRetryWaitMs ?? 60_000
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...options.headers,
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    ...(options.adminToken ? { 'x-admin-token': options.adminToken } : {}),
  }

  const urlOf = (path: string, query: Query = {}) => {
    const params = new URLSearchParams()
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue
      for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one))
    }
    const search = params.toString()
    return `${base}${path}${search ? `?${search}` : ''}`
  }

  return async function request<T>(method: string, path: string, req: RequestOptions = {}): Promise<T> {
    const init: RequestInit = { method, headers: { ...headers } }
    const sent = init.headers as Record<string, string>
    if (req.json !== undefined) {
      init.body = JSON.stringify(req.json)
      sent['content-type'] = 'application/json'
    } else if (req.body !== undefined) {
      init.body = req.body
      if (req.contentType) sent['content-type'] = req.contentType
    }
    if (method === 'POST') sent['idempotency-key'] = crypto.randomUUID()
    const url = urlOf(path, req.query)
    for (let attempt = 0; ; attempt++) {
      const response = await send(url, init)
      if (response.ok) {
        if (req.blob) return (await response.blob()) as T
        if (response.status === 204) return undefined as T
        return (await response.json()) as T
      }
      const wait =
        retryAfterMs(response.headers.get('retry-after')) ?? firstDelay * 2 ** attempt * (0.5 + Math.random() / 2)
      // a stream can be sent only once
      const resendable = !(init.body instanceof ReadableStream)
      if (RETRIED.has(response.status) && resendable && attempt < maxRetries && wait <= maxWait) {
        await response.body?.cancel()
        await new Promise((done) => setTimeout(done, wait))
        continue
      }
      const problem = (await response.json().catch(() => null)) as Problem | null
      throw new ApiError(response.status, problem, response)
    }
  }
}

export type Request = ReturnType<typeof transport>
