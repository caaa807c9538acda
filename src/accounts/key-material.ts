import { randomBytes } from 'node:crypto'

/** Raw keys look like `gck_live_` + 43 base64url characters (256 random bits). */
export const KEY_PREFIX = 'gck_live_'
const KEY_SHAPE = /^gck_live_[A-Za-z0-9_-]{43}$/

export function newRawKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

/** SHA-256 in hex, in one native call (every keyed request hashes its key). */
export const hashKey = (raw: string) => Bun.SHA256.hash(raw, 'hex')

export const looksLikeKey = (raw: string) => KEY_SHAPE.test(raw)
