import { config } from '../config'
import { logger } from '../shared/logger'
import { fromTrustedProxy } from './client-ip'

/** What the origin is read from besides the request: the listening server (Bun's), when known. */
export type Listener = {
  hostname?: string | undefined
  port?: number | undefined
  requestIP(request: Request): { address: string } | null
}

/**
 * The origin the service's own absolute URLs start with (the resolver's Link headers, linkset
 * anchors, resolver root). Never the request's Host: a client could write any host there and have
 * it reflected into answers that caches keep (issue 44). In order:
 * 1. PUBLIC_URL, when set;
 * 2. behind a proxy TRUST_PROXY trusts: its X-Forwarded-Proto (http or https) and X-Forwarded-Host
 *    (else the Host it sent), each the last value (the one our proxy wrote), the host checked as
 *    hostname[:port];
 * 3. the address the server listens on (`localhost` for a wildcard address).
 */
export function publicOrigin(request: Request, server: Listener | null | undefined): string {
  if (configured !== null) return configured
  if (config.TRUST_PROXY !== undefined) {
    const forwarded = forwardedOrigin(request, server)
    if (forwarded !== null) return forwarded
  }
  return listening(server)
}

const configured = config.PUBLIC_URL ? new URL(config.PUBLIC_URL).origin : null

/** hostname (DNS letters, digits, hyphens and dots) or a bracketed IPv6 literal, then an optional port */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/

/** The last of a header's comma-separated values: the one the proxy nearest us wrote. */
function lastValue(value: string | null): string | null {
  if (value === null) return null
  const last = value.slice(value.lastIndexOf(',') + 1).trim()
  return last === '' ? null : last
}

function forwardedOrigin(request: Request, server: Listener | null | undefined): string | null {
  const socket = server?.requestIP(request)?.address
  if (!fromTrustedProxy(socket)) return null
  const headers = request.headers
  const host = lastValue(headers.get('x-forwarded-host')) ?? lastValue(headers.get('host'))
  if (host === null || host.length > 261 || !HOST.test(host)) return null
  const proto = lastValue(headers.get('x-forwarded-proto'))?.toLowerCase()
  return `${proto === 'https' ? 'https' : 'http'}://${host.toLowerCase()}`
}

let warned = false
let local: { key: string; origin: string } | null = null

/** `http://<listening address>:<port>`: config's HOST and PORT when the server is not known. */
function listening(server: Listener | null | undefined): string {
  const hostname = server?.hostname ?? config.HOST
  const port = server?.port ?? config.PORT
  const key = `${hostname} ${port}`
  if (local?.key === key) return local.origin
  if (config.environment === 'production' && !warned) {
    warned = true
    logger.warn('PUBLIC_URL is not set: resolver links name the listening address; set PUBLIC_URL')
  }
  const wildcard = hostname === '0.0.0.0' || hostname === '::' || hostname === ''
  const host = wildcard ? 'localhost' : hostname.includes(':') ? `[${hostname}]` : hostname
  local = { key, origin: `http://${host}:${port}` }
  return local.origin
}
