import { listener } from '../db/listener'
import type { ApiKeyRole } from './roles'

export type Caller = { keyId: string; organizationId: string; role: ApiKeyRole }

export const REVOCATION_CHANNEL = 'api_key_revoked'
const MAX_ENTRIES = 50_000

/**
 * Verified keys by hash, so authentication costs no database round trip. Entries live `ttl`
 * seconds; a revocation deletes the entry at once in this process and, through LISTEN/NOTIFY,
 * in every other process. While the listener is down the cache is bypassed, never trusted.
 */
class KeyCache {
  #entries = new Map<string, { caller: Caller; until: number }>()
  #listening = false
  #ttlMs = 0

  configure(ttlSeconds: number) {
    this.#ttlMs = ttlSeconds * 1000
  }

  get(hash: string): Caller | null {
    const entry = this.#entries.get(hash)
    if (!entry) return null
    if (!this.#listening || entry.until < performance.now()) {
      this.#entries.delete(hash)
      return null
    }
    return entry.caller
  }

  set(hash: string, caller: Caller) {
    if (!this.#listening || this.#ttlMs === 0) return
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear()
    this.#entries.set(hash, { caller, until: performance.now() + this.#ttlMs })
  }

  forget(hash: string) {
    this.#entries.delete(hash)
  }

  clear() {
    this.#entries.clear()
  }

  setListening(on: boolean) {
    this.#listening = on
    if (!on) this.clear()
  }
}

export const keyCache = new KeyCache()

/** Revocations from every process arrive on the shared listener; the cache is trusted only while it listens. */
export function listenForRevocations() {
  return listener.on(REVOCATION_CHANNEL, {
    onMessage: (hash) => keyCache.forget(hash),
    onListening: (on) => keyCache.setListening(on),
  })
}
