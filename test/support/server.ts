export let baseUrl = ''
export let databaseUrl = ''
export const setServer = (url: string, db: string) => {
  baseUrl = url
  databaseUrl = db
}

export type Headers = Record<string, string>
type Body = unknown
export type CallOptions = {
  key?: string
  body?: Body
  /** sent as is (a CSV, a gzip), instead of `body` as JSON */
  raw?: string | Uint8Array
  /** the content type, for a raw body or to override JSON's */
  type?: string
  headers?: Headers
}
export type Reply = { status: number; headers: globalThis.Headers; json: any; text: string }

/**
 * Requests to the server at `base` (a URL, or a function giving it once the server is up):
 * real HTTP, JSON bodies unless `raw` is given, the reply's JSON when it parses (else null).
 * The shared test server's helpers below are `api(() => baseUrl)`; a test with a server of its
 * own takes the same helpers from `api(itsUrl)`.
 */
export function api(base: string | (() => string)) {
  const urlOf = typeof base === 'string' ? () => base : base
  async function call(method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
    const headers: Headers = { ...opts.headers }
    if (opts.key) headers['x-api-key'] = opts.key
    let body: BodyInit | undefined
    // a Buffer is a Uint8Array fetch sends as is; its ArrayBufferLike typing is too wide for BodyInit
    if (opts.raw !== undefined) body = opts.raw as BodyInit
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    if (opts.type) headers['content-type'] = opts.type
    const res = await fetch(urlOf() + path, { method, headers, body, redirect: 'manual' })
    const text = await res.text()
    let json: any = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {}
    return { status: res.status, headers: res.headers, json, text }
  }
  return {
    call,
    get: (path: string, key?: string, headers?: Headers) => call('GET', path, { key, headers }),
    post: (path: string, body: Body, key?: string, headers?: Headers) => call('POST', path, { key, body, headers }),
    patch: (path: string, body: Body, key?: string) => call('PATCH', path, { key, body }),
    del: (path: string, key?: string) => call('DELETE', path, { key }),
  }
}

/** The shared test server's helpers. */
export const { call, get, post, patch, del } = api(() => baseUrl)
