import { describe, expect, test } from 'bun:test'
import { leaseAfterFailure, TIMED_OUT_GRACE_MS } from '../../../src/webhooks/leases'

// The fair-shares test (test/integration/security/deliveries.test.ts) counts connections at a
// receiver that never answers: a timed-out attempt's socket is closed by fetch after the attempt has
// ended, so its delivery stays leased (counted in its shares) a moment after its failure is recorded.
describe('the lease a failed attempt leaves', () => {
  const at = new Date('2026-11-27T06:00:00Z')

  test('a timed-out attempt keeps its shares for the grace', () => {
    expect(leaseAfterFailure({ timedOut: true }, at)).toEqual(new Date(at.getTime() + TIMED_OUT_GRACE_MS))
    expect(TIMED_OUT_GRACE_MS).toBeGreaterThan(0)
  })

  test('an answered, refused or failed connection frees them at once', () => {
    expect(leaseAfterFailure({ timedOut: false }, at)).toBeNull()
  })
})
