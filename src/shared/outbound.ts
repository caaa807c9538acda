import { lookup } from 'node:dns/promises'
import { checkServerIdentity, type PeerCertificate } from 'node:tls'
import ipaddr from 'ipaddr.js'
import { config } from '../config'

/**
 * Where the service's own outgoing requests (webhooks, scheduled feed downloads) may go. Outside
 * development a target must be HTTPS and every address its host resolves to must be public unicast: loopback, private, link-local (cloud metadata at
 * 169.254.169.254), unique-local, multicast, carrier-grade NAT and the reserved ranges are refused,
 * IPv4-mapped and NAT64 forms included. In development (`APP_ENV=development`) `http://` and
 * loopback targets are allowed, so a receiver or feed on the developer's machine works.
 */
export type TargetPolicy = { development: boolean }
export const targetPolicy = (): TargetPolicy => ({ development: config.environment === 'development' })

/** The reason an address may not be reached outside development, or null when it is public. */
export function refusedRange(address: string): string | null {
  // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it maps
  const range = ipaddr.process(address).range()
  return range === 'unicast' ? null : range
}

export class TargetRefused extends Error {
  constructor(
    message: string,
    /** `unresolved`: the name has no address (now); `refused`: an address is not allowed. */
    readonly kind: 'unresolved' | 'refused' = 'refused',
  ) {
    super(message)
  }
}

/** The host of a URL as an address literal, or null when it is a name (brackets of IPv6 removed). */
function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return ipaddr.isValid(host) ? host : null
}

export type ResolvedTarget = { address: string; family: 4 | 6 }

/**
 * The address to connect to for a target: its literal address, or the first its name resolves
 * to, after checking every resolved address (a name with one private address among public ones is
 * refused). The caller connects to exactly this address, so there is no second lookup a DNS change
 * could slip through. Throws TargetRefused.
 */
export async function resolveTarget(url: URL, policy: TargetPolicy): Promise<ResolvedTarget> {
  const literal = literalAddress(url)
  let addresses: { address: string; family: number }[]
  if (literal) addresses = [{ address: literal, family: ipaddr.parse(literal).kind() === 'ipv6' ? 6 : 4 }]
  else {
    try {
      addresses = await lookup(url.hostname, { all: true, verbatim: true })
    } catch (err) {
      // RFC 6761: localhost and its subdomains are loopback even where no resolver says so
      const name = url.hostname.replace(/\.$/, '').toLowerCase()
      if (!policy.development && (name === 'localhost' || name.endsWith('.localhost')))
        throw new TargetRefused(`${url.hostname} is a loopback name`)
      throw new TargetRefused(
        `${url.hostname} does not resolve (${(err as { code?: string }).code ?? 'lookup failed'})`,
        'unresolved',
      )
    }
  }
  if (!policy.development)
    for (const { address } of addresses) {
      const range = refusedRange(address)
      if (range) throw new TargetRefused(`${url.hostname} is or resolves to ${address}, a ${range} address`)
    }
  const first = addresses[0]
  if (!first) throw new TargetRefused(`${url.hostname} has no address`, 'unresolved')
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}

/**
 * fetch() to the address `resolveTarget` vetted: the URL's host is replaced by that address, and
 * the name goes in the Host header and, for HTTPS, in SNI and the certificate check, so there is no
 * second lookup a DNS change could slip through. Redirects are not followed. Throws TargetRefused.
 */
export async function fetchPinned(url: URL, init: RequestInit, policy: TargetPolicy): Promise<Response> {
  const { address, family } = await resolveTarget(url, policy)
  const pinned = new URL(url)
  pinned.hostname = family === 6 ? `[${address}]` : address
  const named = pinned.hostname !== url.hostname
  const headers = new Headers(init.headers)
  if (named) headers.set('host', url.host)
  return fetch(pinned, {
    ...init,
    headers,
    redirect: 'manual',
    tls:
      named && url.protocol === 'https:'
        ? {
            serverName: url.hostname,
            checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(url.hostname, cert),
          }
        : undefined,
  } as RequestInit)
}
