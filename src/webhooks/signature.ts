import { createHmac, timingSafeEqual } from 'node:crypto'

// This module is the receiver helper the package exports: it imports nothing of the server.

/** After a rotation, deliveries also carry the previous secret's signature for this long. */
export const ROTATION_GRACE_MS = 24 * 3600 * 1000

const hmac = (secret: string, timestamp: number, rawBody: string | Uint8Array) =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')

/** The secrets a delivery is signed with at `now`: the current one, and the previous during its grace. */
export type SigningSecrets = { secret: string; previousSecret?: string | null; rotatedAt?: Date | null }

/**
 * The `X-Service-Signature` header for a body sent at `now`: `t=<unix seconds>,v1=<hex>`, and for
 * 24 hours after a rotation also `,v1=<old hex>,v1old=<old hex>` (contract §7): Stripe-style
 * verifiers try every `v1=`, receivers written for this service read `v1old=`. The bytes signed must
 * be the bytes sent.
 */
export function signatureHeader(secrets: SigningSecrets, rawBody: string, now: Date): string {
  const t = Math.floor(now.getTime() / 1000)
  let header = `t=${t},v1=${hmac(secrets.secret, t, rawBody)}`
  const { previousSecret, rotatedAt } = secrets
  if (previousSecret && rotatedAt && now.getTime() - rotatedAt.getTime() < ROTATION_GRACE_MS) {
    const old = hmac(previousSecret, t, rawBody)
    header += `,v1=${old},v1old=${old}`
  }
  return header
}

export type VerifyOptions = {
  /** How far the signature's time may be from now, either way (default 300 s, the spec's 5 minutes). */
  toleranceSeconds?: number
  /** The receiver's clock (default: the current time). */
  now?: Date
}

/**
 * For webhook receivers: true when `header` (the `X-Service-Signature` value) carries a `v1` or
 * `v1old` signature (any of them: after a rotation there are two `v1`) of `rawBody` (the request body exactly as received, before any JSON parsing)
 * made with `secret`, and its time is within the tolerance of now. Comparisons are constant-time.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  rawBody: string | Uint8Array,
  { toleranceSeconds = 300, now = new Date() }: VerifyOptions = {},
): boolean {
  if (!secret || !header) return false
  let timestamp: number | null = null
  const signatures: Buffer[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if ((key === 'v1' || key === 'v1old') && /^[0-9a-f]{64}$/.test(value))
      signatures.push(Buffer.from(value, 'hex'))
  }
  if (timestamp === null || signatures.length === 0) return false
  if (Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) return false
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), 'hex')
  // every candidate is compared, so the time taken does not tell which one matched
  let matched = false
  for (const signature of signatures) matched = timingSafeEqual(signature, expected) || matched
  return matched
}
