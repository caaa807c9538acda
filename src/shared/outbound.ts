import { lookup } from 'node:dns/promises'
import { checkServerIdentity, type PeerCertificate } from 'node:tls'
import ipaddr from 'ipaddr.js'
import { config } from '../config'

/**
 * Where the service's own outgoing requests (webhooks, scheduled feed downloads) may go. Outside
 * development a target must be HTTPS and every address its host resolves to must be public
 * unicast: loopback, private, link-local (cloud metadata at 169.254.169.254), unique-local,
 * multicast, carrier-grade NAT and the reserved ranges are refused, and an IPv6 address that
 * carries an IPv4 address is judged as the address it carries (below). In development
 * (`APP_ENV=development`) `http://` and loopback targets are allowed, so a receiver or feed on the
 * developer's machine works.
 */
export type TargetPolicy = { development: boolean }
export const targetPolicy = (): TargetPolicy => ({ development: config.environment === 'development' })

type Embedding = { name: string; prefix: [ipaddr.IPv6, number]; carried: (bytes: number[]) => number[][] }
const v6prefix = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr)

/**
 * IPv6 forms that carry an IPv4 address, and where in the 16 bytes: a connection to one of them
 * reaches (through the kernel, a NAT64 gateway or a tunnel relay) the IPv4 host it names, so
 * `::7f00:1` or `64:ff9b::a00:1` must be refused like 127.0.0.1 and 10.0.0.1. Teredo carries two:
 * its server and, inverted, its client. Checked before ipaddr.js's own ranges, which call
 * IPv4-compatible `::7f00:1` plain unicast.
 */
const EMBEDDINGS: Embedding[] = [
  { name: 'IPv4-mapped', prefix: v6prefix('::ffff:0:0/96'), carried: (b) => [b.slice(12)] },
  { name: 'IPv4-translated', prefix: v6prefix('::ffff:0:0:0/96'), carried: (b) => [b.slice(12)] },
  { name: 'NAT64', prefix: v6prefix('64:ff9b::/96'), carried: (b) => [b.slice(12)] },
  { name: 'IPv4-compatible', prefix: v6prefix('::/96'), carried: (b) => [b.slice(12)] },
  { name: '6to4', prefix: v6prefix('2002::/16'), carried: (b) => [b.slice(2, 6)] },
  {
    name: 'Teredo',
    prefix: v6prefix('2001::/32'),
    carried: (b) => [b.slice(4, 8), b.slice(12).map((x) => x ^ 0xff)],
  },
]
/** RFC 8215: a translator of the operator's own choosing, reaching its own network; never a public target. */
const LOCAL_NAT64 = v6prefix('64:ff9b:1::/48')

/**
 * Why an address may not be reached outside development ("a loopback address", "the NAT64 form
 * of 10.0.0.1, a private address"), or null when it is public.
 */
export function refusedRange(address: string): string | null {
  const ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6
    const range = v6.range()
    // :: and ::1 sit inside ::/96 but are addresses of their own
    if (range === 'unspecified' || range === 'loopback') return `an IPv6 ${range} address`
    if (v6.match(LOCAL_NAT64)) return 'a local-use NAT64 address'
    const form = EMBEDDINGS.find((e) => v6.match(e.prefix))
    if (form) {
      for (const bytes of form.carried(v6.toByteArray())) {
        const v4 = new ipaddr.IPv4(bytes)
        if (v4.range() !== 'unicast') return `the ${form.name} form of ${v4}, a ${v4.range()} address`
      }
      return null
    }
    return range === 'unicast' ? null : `a ${range} address`
  }
  const range = ip.range()
  return range === 'unicast' ? null : `a ${range} address`
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

/** Throws TargetRefused when the policy refuses one of the addresses a target is or resolves to. */
function checkAddresses(url: URL, addresses: readonly { address: string }[], policy: TargetPolicy) {
  if (!policy.development)
    for (const { address } of addresses) {
      const range = refusedRange(address)
      if (range) throw new TargetRefused(`${url.hostname} is or resolves to ${address}, ${range}`)
    }
}

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
  checkAddresses(url, addresses, policy)
  const first = addresses[0]
  if (!first) throw new TargetRefused(`${url.hostname} has no address`, 'unresolved')
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}

/**
 * What the checks say of a target by its URL and policy: `false` for a host name (resolved and
 * checked on every connection, as a name's addresses may change), else the literal address's
 * verdict (null: allowed; text: why it is refused), which cannot change, so it is worked out once
 * per URL: redone for every webhook POST, the checks, the lookup's promises, the pinned URL and the
 * copied headers cost about 3.5 µs a POST to a literal target.
 */
const verdicts = new Map<string, string | null | false>()
function literalVerdict(url: URL, policy: TargetPolicy): string | null | false {
  const key = `${policy.development ? 'development' : 'checked'} ${url.href}`
  const known = verdicts.get(key)
  if (known !== undefined) return known
  let verdict: string | null | false = false
  const literal = literalAddress(url)
  if (literal)
    try {
      checkAddresses(url, [{ address: literal }], policy)
      verdict = null
    } catch (err) {
      verdict = (err as TargetRefused).message
    }
  if (verdicts.size >= 10_000) verdicts.clear()
  verdicts.set(key, verdict)
  return verdict
}

/** `work`, or the signal's reason once it aborts first (a DNS lookup cannot itself be cancelled). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  if (!signal) return work
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    signal.addEventListener('abort', abort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
  })
}

/**
 * fetch() to the address `resolveTarget` vetted: the URL's host is replaced by that address, and
 * the name goes in the Host header and, for HTTPS, in SNI and the certificate check, so there is no
 * second lookup a DNS change could slip through. Redirects are not followed. The request's signal
 * bounds the lookup too, so a timeout covers the whole attempt. Throws TargetRefused.
 */
export async function fetchPinned(url: URL, init: RequestInit, policy: TargetPolicy): Promise<Response> {
  // a literal address is its own pin: the same request as below, without redoing its checks
  const verdict = literalVerdict(url, policy)
  if (typeof verdict === 'string') throw new TargetRefused(verdict)
  if (verdict === null) return fetch(url, { ...init, redirect: 'manual' })
  const { address, family } = await untilAborted(resolveTarget(url, policy), init.signal)
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
