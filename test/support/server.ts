export let baseUrl = ''
export let databaseUrl = ''
export const setServer = (url: string, db: string) => {
  baseUrl = url
  databaseUrl = db
}

export type Headers = Record<string, string>
type Body = unknown

/** A real HTTP call to the test server; JSON bodies unless `raw` is given. */
export async function call(
  method: string,
  path: string,
  opts: { key?: string; body?: Body; raw?: string; headers?: Headers } = {},
) {
  const headers: Headers = { ...opts.headers }
  if (opts.key) headers['x-api-key'] = opts.key
  let body: string | undefined
  if (opts.raw !== undefined) body = opts.raw
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' })
  const text = await res.text()
  let json: any = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {}
  return { status: res.status, headers: res.headers, json, text }
}

export const get = (path: string, key?: string, headers?: Headers) => call('GET', path, { key, headers })
export const post = (path: string, body: Body, key?: string, headers?: Headers) =>
  call('POST', path, { key, body, headers })
export const patch = (path: string, body: Body, key?: string) => call('PATCH', path, { key, body })
export const del = (path: string, key?: string) => call('DELETE', path, { key })
