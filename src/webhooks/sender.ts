import { observeDeliveryAttempt } from '../observability/metrics'
import { withOutgoingSpan } from '../observability/tracing'
import { fetchPinned, type TargetPolicy, TargetRefused } from '../shared/outbound'

export type PostResult = {
  /** HTTP status, or null when no response came (refused target, timeout, connection error). */
  status: number | null
  /** Seconds a 429/503 asked us to wait (Retry-After), when it said. */
  retryAfter: number | null
  latencyMs: number
  error: string | null
  /**
   * This side gave up waiting (the timeout): fetch tears the connection down on its own HTTP
   * thread, after the rejection has reached us, so the socket may still be open for a moment.
   */
  timedOut: boolean
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (!value) return null
  if (/^\s*\d+\s*$/.test(value)) return Number(value)
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, (at - now.getTime()) / 1000)
}

/**
 * POSTs a body to a target at the address its checks vetted (`fetchPinned`). Redirects are not
 * followed (a 3xx is a failed attempt); the response body is discarded. `traceparent`: the trace
 * of the request that emitted the event; the POST carries a `traceparent` of the same trace.
 */
export async function postToTarget(
  target: string,
  body: string,
  headers: Record<string, string>,
  policy: TargetPolicy,
  timeoutMs: number,
  traceparent?: string | null,
): Promise<PostResult> {
  // `headers` (the caller's own object) gains the span's traceparent
  const result = await withOutgoingSpan('webhook POST', traceparent, headers, () =>
    post(target, body, headers, policy, timeoutMs),
  )
  observeDeliveryAttempt(result.status, result.error)
  return result
}

async function post(
  target: string,
  body: string,
  headers: Record<string, string>,
  policy: TargetPolicy,
  timeoutMs: number,
): Promise<PostResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const url = new URL(target)
  try {
    const response = await fetchPinned(
      url,
      { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs) },
      policy,
    )
    await response.body?.cancel().catch(() => {})
    const retryAfter =
      response.status === 429 || response.status === 503
        ? parseRetryAfter(response.headers.get('retry-after'), new Date())
        : null
    return { status: response.status, retryAfter, latencyMs: elapsed(), error: null, timedOut: false }
  } catch (err) {
    const e = err as Error
    const timedOut = !(err instanceof TargetRefused) && e?.name === 'TimeoutError'
    const error =
      err instanceof TargetRefused
        ? `refused: ${e.message}`
        : timedOut
          ? `timed out after ${timeoutMs / 1000} s`
          : `connection failed: ${e?.message ?? String(err)}`
    return { status: null, retryAfter: null, latencyMs: elapsed(), error, timedOut }
  }
}
