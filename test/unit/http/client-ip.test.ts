import { describe, expect, test } from 'bun:test'
import { limitKey, parseTrustProxy } from '../../../src/http/client-ip'

describe('client addresses for limits', () => {
  test('IPv6 callers count by /64; IPv4 by address', () => {
    expect(limitKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64')
    expect(limitKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64')
    expect(limitKey('198.51.100.4')).toBe('198.51.100.4')
  })

  test('TRUST_PROXY: unset trusts nothing; a hop count; addresses and ranges', () => {
    expect(parseTrustProxy(undefined)).toBeNull()
    expect(parseTrustProxy('false')).toBeNull()
    expect(parseTrustProxy('true')).toEqual({ hops: 1 })
    expect(parseTrustProxy('2')).toEqual({ hops: 2 })
    const ranges = parseTrustProxy('10.0.0.0/8, 192.0.2.1')
    expect(ranges && 'ranges' in ranges ? ranges.ranges.map(([a, bits]) => `${a}/${bits}`) : null).toEqual([
      '10.0.0.0/8',
      '192.0.2.1/32',
    ])
  })
})
