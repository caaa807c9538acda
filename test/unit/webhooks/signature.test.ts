import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { nextRetryDelayMs, retrySchedule } from '../../../src/webhooks/retry-schedule'
import { parseRetryAfter } from '../../../src/webhooks/sender'
import { ROTATION_GRACE_MS, signatureHeader, verifyWebhookSignature } from '../../../src/webhooks/signature'

const SECRET = 'whsec_current-secret-0123456789abcdefghijklmnopq'
const OLD = 'whsec_previous-secret-0123456789abcdefghijklmnop'
const BODY = '{"id":"abc","event_type":"product.created","data":{"name":"Crème brûlée 🍮"}}'
const NOW = new Date('2026-11-24T12:00:00Z')
const at = (ms: number) => new Date(NOW.getTime() + ms)

describe('signature header', () => {
  test('is HMAC-SHA256 over "<t>.<raw body>", lowercase hex', () => {
    const header = signatureHeader({ secret: SECRET }, BODY, NOW)
    const t = NOW.getTime() / 1000
    const expected = createHmac('sha256', SECRET).update(`${t}.${BODY}`, 'utf8').digest('hex')
    expect(header).toBe(`t=${t},v1=${expected}`)
  })

  test('rotation grace: the old signature (second v1, and v1old) for 24 hours after the rotation, then only the new secret', () => {
    const secrets = { secret: SECRET, previousSecret: OLD, rotatedAt: NOW }
    for (const later of [0, 3600_000, ROTATION_GRACE_MS - 1000]) {
      const sent = at(later)
      const header = signatureHeader(secrets, BODY, sent)
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=([0-9a-f]{64}),v1old=\1$/)
      expect(verifyWebhookSignature(SECRET, header, BODY, { now: sent })).toBe(true)
      expect(verifyWebhookSignature(OLD, header, BODY, { now: sent })).toBe(true)
    }
    const after = at(ROTATION_GRACE_MS + 1000)
    const header = signatureHeader(secrets, BODY, after)
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: after })).toBe(true)
    expect(verifyWebhookSignature(OLD, header, BODY, { now: after })).toBe(false)
  })
})

describe('verifyWebhookSignature', () => {
  const header = signatureHeader({ secret: SECRET }, BODY, NOW)

  test('accepts the body as sent, as a string or as bytes', () => {
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: NOW })).toBe(true)
    expect(verifyWebhookSignature(SECRET, header, new TextEncoder().encode(BODY), { now: NOW })).toBe(true)
  })

  test('refuses a tampered body, another secret, or a re-serialised body', () => {
    expect(verifyWebhookSignature(SECRET, header, BODY.replace('brûlée', 'brulee'), { now: NOW })).toBe(false)
    expect(verifyWebhookSignature(OLD, header, BODY, { now: NOW })).toBe(false)
    expect(verifyWebhookSignature(SECRET, header, JSON.stringify(JSON.parse(BODY), null, 1), { now: NOW })).toBe(false)
  })

  test('refuses timestamps older than 5 minutes or more than 5 minutes ahead', () => {
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: at(300_000) })).toBe(true)
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: at(301_000) })).toBe(false)
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: at(-301_000) })).toBe(false)
    expect(verifyWebhookSignature(SECRET, header, BODY, { now: at(301_000), toleranceSeconds: 600 })).toBe(true)
  })

  test('refuses a timestamp changed without re-signing, and malformed headers', () => {
    const shifted = header.replace(/^t=(\d+)/, (_, t) => `t=${Number(t) + 1}`)
    expect(verifyWebhookSignature(SECRET, shifted, BODY, { now: NOW })).toBe(false)
    const v1 = header.split(',v1=')[1]!
    for (const bad of [
      '',
      null,
      undefined,
      `v1=${v1}`,
      `t=${NOW.getTime() / 1000}`,
      `t=abc,v1=${v1}`,
      `t=${NOW.getTime() / 1000},v1=${v1.toUpperCase()}`,
      `t=${NOW.getTime() / 1000},v1=${v1.slice(2)}`,
      `t=${NOW.getTime() / 1000},v2=${v1}`,
    ])
      expect(verifyWebhookSignature(SECRET, bad, BODY, { now: NOW })).toBe(false)
    expect(verifyWebhookSignature('', header, BODY, { now: NOW })).toBe(false)
  })
})

describe('retry schedule', () => {
  const published = [30, 120, 600, 3600, 14400, 43200, 86400]

  test('is 30 s, 2 min, 10 min, 1 h, 4 h, 12 h, 24 h, each within ±10 %, then spent', () => {
    expect(published.map((_, i) => nextRetryDelayMs(i + 1, null, published, () => 0.5))).toEqual(
      published.map((s) => s * 1000),
    )
    published.forEach((s, i) => {
      expect(nextRetryDelayMs(i + 1, null, published, () => 0)).toBe(s * 900)
      expect(nextRetryDelayMs(i + 1, null, published, () => 0.999999)).toBeLessThanOrEqual(s * 1100)
    })
    expect(nextRetryDelayMs(8, null, published)).toBeNull()
    expect(retrySchedule()).toEqual(published)
  })

  test('Retry-After is honoured when longer, up to the longest step', () => {
    expect(nextRetryDelayMs(1, 90, published, () => 0.5)).toBe(90_000)
    expect(nextRetryDelayMs(1, 5, published, () => 0.5)).toBe(30_000)
    expect(nextRetryDelayMs(1, 10 * 86400, published, () => 0.5)).toBe(86400_000)
  })

  test('Retry-After is read as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120)
    expect(parseRetryAfter(new Date(NOW.getTime() + 60_000).toUTCString(), NOW)).toBe(60)
    expect(parseRetryAfter('soon', NOW)).toBeNull()
    expect(parseRetryAfter(null, NOW)).toBeNull()
  })
})
