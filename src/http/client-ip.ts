import ipaddr from 'ipaddr.js'
import { config } from '../config'

/**
 * The caller's address: the socket's, unless TRUST_PROXY says which proxies in front may be
 * believed about X-Forwarded-For:
 * - unset: X-Forwarded-For is ignored (a client could write anything there);
 * - a number N (`true` is 1): the last N hops are our proxies; the address before them is the client;
 * - a comma-separated list of addresses or CIDR ranges: hops from the right are skipped while they
 *   are in the list (the socket address must be in it for X-Forwarded-For to count at all).
 * Rate limits key IPv6 callers by their /64 network (one host usually has the whole /64).
 */
type Trust = { hops: number } | { ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] } | null

export function parseTrustProxy(value: string | undefined): Trust {
  if (value === undefined || value === '' || value === 'false' || value === '0') return null
  if (value === 'true') return { hops: 1 }
  if (/^\d+$/.test(value)) return { hops: Number(value) }
  return {
    ranges: value.split(',').map((part) => {
      const text = part.trim()
      return text.includes('/')
        ? ipaddr.parseCIDR(text)
        : ([ipaddr.parse(text), ipaddr.parse(text).kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number])
    }),
  }
}

const trust = parseTrustProxy(config.TRUST_PROXY)

const parse = (text: string) => {
  const trimmed = text.trim().replace(/^\[|\](:\d+)?$/g, '')
  if (!ipaddr.isValid(trimmed)) return null
  const address = ipaddr.parse(trimmed)
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address
}

const trusted = (address: ipaddr.IPv4 | ipaddr.IPv6, t: Extract<Trust, { ranges: unknown }>) =>
  t.ranges.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits))

/** The client address as text, or null when the socket's is unknown. */
export function clientAddress(socket: string | null | undefined, forwardedFor: string | undefined): string | null {
  const direct = socket ? parse(socket) : null
  if (!direct) return null
  if (!trust || !forwardedFor) return direct.toString()
  const chain = forwardedFor.split(',').map(parse)
  if ('hops' in trust) {
    const candidate = chain[chain.length - trust.hops]
    return (candidate ?? chain[0] ?? direct).toString()
  }
  if (!trusted(direct, trust)) return direct.toString()
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i]
    if (!hop) return direct.toString()
    if (!trusted(hop, trust)) return hop.toString()
  }
  return (chain[0] ?? direct).toString()
}

/**
 * Whether the request came through a proxy TRUST_PROXY names, so that what it forwards (the
 * client's protocol and host) may be believed: any socket for a hop count, else one in the list.
 */
export function fromTrustedProxy(socket: string | null | undefined): boolean {
  if (!trust) return false
  if ('hops' in trust) return true
  const direct = socket ? parse(socket) : null
  return direct !== null && trusted(direct, trust)
}

/** The key a per-client limit counts under: the IPv4 address, or the IPv6 /64 network. */
export function limitKey(address: string): string {
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv4') return address
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4)
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`
}
