// API keys of the Typesense stand-in, as Typesense defines them (typesense.org/docs/29.0/api/api-keys,
// and its AuthManager): keys created through POST /keys with actions and collections, and scoped
// search keys: base64(HMAC-SHA256 base64 of the embedded parameters' JSON with the parent's value,
// the parent's first 4 characters, the JSON). A scoped key is accepted only for searches, only
// when a parent with that prefix allows nothing but `documents:search` on the searched collection
// and its HMAC matches; its `filter_by` is joined to the request's with `&&`, `expires_at` ends it.

import { createHmac, randomBytes } from 'node:crypto'

export type StoredKey = {
  id: number
  value: string
  description: string
  actions: string[]
  collections: string[]
  expires_at: number
}

const FAR_FUTURE = 64723363199
const DIGEST_LENGTH = 44
const PREFIX_LENGTH = 4

type KeyFail = (status: number, message: string) => never

export function fakeKeyStore(bootstrap: string, fail: KeyFail) {
  const keys: StoredKey[] = []
  const now = () => Math.floor(Date.now() / 1000)
  const collectionAllowed = (key: StoredKey, collection: string) =>
    key.collections.some((c) => c === '*' || c === collection || new RegExp(`^${c}$`).test(collection))
  const actionAllowed = (key: StoredKey, action: string) =>
    key.actions.some((a) => a === '*' || a === action || (a.endsWith(':*') && action.startsWith(a.slice(0, -1))))

  /** POST /keys: the stored key, with its full value (the only time Typesense shows it). */
  function create(body: unknown): StoredKey {
    const b = (body ?? {}) as Record<string, unknown>
    for (const name of ['description', 'actions', 'collections'])
      if (!(name in b)) fail(400, `Could not find a \`${name}\` key.`)
    if (b.value !== undefined && typeof b.value !== 'string') fail(400, 'Key value must be a string.')
    const strings = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')
    if (!strings(b.actions)) fail(400, 'Wrong format for `actions`. It should be an array of string.')
    if (!strings(b.collections)) fail(400, 'Wrong format for `collections`. It should be an array of string.')
    const value = (b.value as string | undefined) ?? randomBytes(24).toString('base64url')
    if (value === bootstrap || keys.some((k) => k.value === value)) fail(409, 'API key generation conflict.')
    const key: StoredKey = {
      id: keys.length,
      value,
      description: String(b.description),
      actions: b.actions as string[],
      collections: b.collections as string[],
      expires_at: typeof b.expires_at === 'number' ? b.expires_at : FAR_FUTURE,
    }
    keys.push(key)
    return key
  }

  /** The parameters a scoped key embeds, when one of the stored parents signed it for this collection. */
  function scoped(key: string, collection: string): Record<string, unknown> | null {
    const payload = Buffer.from(key, 'base64').toString()
    if (payload.length < DIGEST_LENGTH + PREFIX_LENGTH) return null
    const digest = payload.slice(0, DIGEST_LENGTH)
    const prefix = payload.slice(DIGEST_LENGTH, DIGEST_LENGTH + PREFIX_LENGTH)
    const json = payload.slice(DIGEST_LENGTH + PREFIX_LENGTH)
    for (const parent of keys) {
      if (!parent.value.startsWith(prefix) || parent.expires_at < now()) continue
      // the parent must allow only searches, and this collection
      if (parent.actions.length !== 1 || parent.actions[0] !== 'documents:search') continue
      if (!collectionAllowed(parent, collection)) continue
      if (createHmac('sha256', parent.value).update(json).digest('base64') !== digest) continue
      let params: unknown
      try {
        params = JSON.parse(json)
      } catch {
        continue
      }
      if (!params || typeof params !== 'object' || Array.isArray(params)) continue
      const expires = (params as { expires_at?: unknown }).expires_at
      if (expires !== undefined && (!Number.isInteger(expires) || (expires as number) < now())) continue
      return params as Record<string, unknown>
    }
    return null
  }

  /**
   * What a request's key may do: the bootstrap key anything; a stored key its actions on its
   * collections; a scoped key a search of collections its parent allows. Returns the embedded
   * parameters per collection (empty for plain keys), or fails 401 as Typesense does.
   */
  function authorize(key: string | null, action: string, collections: string[]): Record<string, unknown>[] {
    const refused = () => fail(401, 'Forbidden - a valid `x-typesense-api-key` header must be sent.')
    if (!key) return refused()
    if (key === bootstrap) return collections.map(() => ({}))
    const stored = keys.find((k) => k.value === key)
    if (stored) {
      if (stored.expires_at < now() || !actionAllowed(stored, action)) return refused()
      if (!collections.every((c) => collectionAllowed(stored, c))) return refused()
      return collections.map(() => ({}))
    }
    if (action !== 'documents:search') return refused()
    return collections.map((c) => scoped(key, c) ?? refused())
  }

  /** A search's parameters with a key's embedded ones: `filter_by` joined with `&&`, others override. */
  function embed(params: Record<string, unknown>, embedded: Record<string, unknown>) {
    const out = { ...params }
    for (const [name, value] of Object.entries(embedded)) {
      if (name === 'expires_at') continue
      if (name === 'filter_by' && out.filter_by) out.filter_by = `(${out.filter_by}) && (${value})`
      else out[name] = value
    }
    return out
  }

  return { keys, create, authorize, embed }
}
