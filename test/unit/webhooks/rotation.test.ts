import { describe, expect, test } from 'bun:test'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ROTATION_GRACE_MS, signatureHeader, verifyWebhookSignature } from '../../../src/webhooks/signature'

// Contract §7: during the 24 h after a rotation the header is
// `t=<unix>,v1=<new hex>,v1=<old hex>,v1old=<old hex>`, so a receiver still holding the old secret
// verifies with a Stripe-style verifier (which tries every `v1=`) as well as with ours.
const NEW = 'whsec_new-secret-0123456789abcdefghijklmnopqrstuv'
const OLD = 'whsec_old-secret-0123456789abcdefghijklmnopqrstuv'
const BODY = '{"id":"ev1","event_type":"product.created","data":{"name":"Crème brûlée"}}'
const NOW = new Date('2026-11-24T12:00:00Z')
const T = NOW.getTime() / 1000
const sign = (secret: string) => createHmac('sha256', secret).update(`${T}.${BODY}`).digest('hex')

/** A verifier written the way Stripe's libraries are: every `v1=` is a candidate, other keys are ignored. */
function stripeStyleVerify(secret: string, header: string, body: string): boolean {
  const parts = header.split(',').map((p) => p.split('=') as [string, string])
  const t = parts.find(([k]) => k === 't')?.[1]
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'))
  return parts.some(([k, v]) => k === 'v1' && v.length === expected.length && timingSafeEqual(Buffer.from(v), expected))
}

describe('signature header after a rotation', () => {
  const rotated = { secret: NEW, previousSecret: OLD, rotatedAt: NOW }

  test('carries the old signature as a second v1= and as v1old=', () => {
    expect(signatureHeader(rotated, BODY, NOW)).toBe(`t=${T},v1=${sign(NEW)},v1=${sign(OLD)},v1old=${sign(OLD)}`)
  })

  test('a Stripe-style verifier accepts the new and the old secret during the grace, only the new after', () => {
    const header = signatureHeader(rotated, BODY, NOW)
    expect(stripeStyleVerify(NEW, header, BODY)).toBe(true)
    expect(stripeStyleVerify(OLD, header, BODY)).toBe(true)
    expect(stripeStyleVerify(`${OLD}x`, header, BODY)).toBe(false)
    const after = new Date(NOW.getTime() + ROTATION_GRACE_MS + 1000)
    const late = signatureHeader(rotated, BODY, after)
    expect(late).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(stripeStyleVerify(OLD, late, BODY)).toBe(false)
  })

  test('the exported verifier accepts either secret from either form, and nothing else', () => {
    const opts = { now: NOW }
    const full = signatureHeader(rotated, BODY, NOW)
    for (const secret of [NEW, OLD]) expect(verifyWebhookSignature(secret, full, BODY, opts)).toBe(true)
    // the old secret's signature alone, as a second v1= (Stripe form) or as v1old= (this service's form)
    const asV1 = `t=${T},v1=${sign(NEW)},v1=${sign(OLD)}`
    const asV1old = `t=${T},v1=${sign(NEW)},v1old=${sign(OLD)}`
    for (const header of [asV1, asV1old]) {
      expect(verifyWebhookSignature(OLD, header, BODY, opts)).toBe(true)
      expect(verifyWebhookSignature(NEW, header, BODY, opts)).toBe(true)
      expect(verifyWebhookSignature(`${OLD}x`, header, BODY, opts)).toBe(false)
      expect(verifyWebhookSignature(OLD, header, `${BODY} `, opts)).toBe(false)
    }
    // a signature made with the new secret is accepted from the v1old= position too
    expect(verifyWebhookSignature(NEW, `t=${T},v1old=${sign(NEW)}`, BODY, opts)).toBe(true)
  })
})
