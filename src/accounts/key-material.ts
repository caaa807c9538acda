import { createHash, randomBytes } from 'node:crypto'

/** Raw keys look like `gck_live_` + 43 base64url characters (256 random bits). */
export const KEY_PREFIX = 'gck_live_'
const KEY_SHAPE = /^gck_live_[A-Za-z0-9_-]{43}$/

export function newRawKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

export const hashKey = (raw: string) => createHash('sha256').update(raw).digest('hex')

export const looksLikeKey = (raw: string) => KEY_SHAPE.test(raw)
