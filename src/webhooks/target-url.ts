import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'
import { config } from '../config'
import { invalidField } from '../shared/errors'

/**
 * Where webhooks may go. Outside development a target must be HTTPS and every address its host
 * resolves to must be public unicast: loopback, private, link-local (cloud metadata at
 * 169.254.169.254), unique-local, multicast, carrier-grade NAT and the reserved ranges are refused,
 * IPv4-mapped and NAT64 forms included. In development (`APP_ENV=development`) `http://` and
 * loopback receivers are allowed, so a receiver on the developer's machine works.
 */
export type TargetPolicy = { development: boolean }
export const targetPolicy = (): TargetPolicy => ({ development: config.environment === 'development' })

/** The reason an address may not receive webhooks outside development, or null when it is public. */
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
 * Checks a target URL at create and update (422 with a reason). A name that does not resolve yet
 * is accepted: DNS may lag a new receiver, and every delivery checks the address again anyway.
 */
export async function checkTargetUrl(raw: string, policy: TargetPolicy = targetPolicy()): Promise<void> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalidField('url', 'must be an absolute URL')
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.development))
    throw invalidField(
      'url',
      policy.development ? 'must use https:// or http://' : 'must use https:// (http:// only in development)',
    )
  if (url.username || url.password) throw invalidField('url', 'must not carry a user name or password')
  try {
    await resolveTarget(url, policy)
  } catch (err) {
    if (!(err instanceof TargetRefused)) throw err
    if (err.kind === 'refused') throw invalidField('url', `is refused: ${err.message}`)
  }
}
