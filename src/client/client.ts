import { treaty } from '@elysiajs/eden'
import type { App } from '../app'
import { withTrailingSlash } from './paths'

export type ClientOptions = {
  /** sent as X-API-Key */
  apiKey?: string
  /** sent as X-Admin-Token (operator routes: organizations, canonical retailers, revenue-share calculation) */
  adminToken?: string
  /** more headers for every request */
  headers?: Record<string, string>
  /** the fetch to use (default: the global one) */
  fetch?: typeof fetch
}

/** JSON, problem+json and text are parsed by Eden; any other body (image, PDF, zip) is a file. */
const PARSED = /^(application\/([a-z.+-]+\+)?json|text\/)/

/**
 * A typed client of the service for Bun and TypeScript callers: Eden Treaty over the app's own
 * route types, so paths, bodies, queries, responses and problem+json errors are typed end to end.
 * Only the type of the app is imported: a caller's bundle holds Eden and this file, none of the
 * server. Each call answers `{ data, error, status, response }`: `error.value` is the problem
 * details of a 4xx/5xx. Files (barcode images, label sheets, zips) come back as a `Blob`;
 * date-times stay ISO strings, as the API sends them.
 *
 * ```ts
 * const api = createClient('http://localhost:3000', { apiKey })
 * const { data, error } = await api.products.api.v1.products({ gtin: '4006381333931' }).get()
 * ```
 */
export function createClient(baseUrl: string, options: ClientOptions = {}) {
  const send = options.fetch ?? fetch
  return treaty<App>(baseUrl, {
    headers: {
      ...options.headers,
      ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
      ...(options.adminToken ? { 'x-admin-token': options.adminToken } : {}),
    },
    parseDate: false,
    fetcher: ((input: string | URL | Request, init?: RequestInit) =>
      send(typeof input === 'string' ? withTrailingSlash(input) : input, init)) as typeof fetch,
    onResponse: async (response) => {
      const type = response.headers.get('content-type') ?? ''
      if (!response.ok || type === '' || PARSED.test(type)) return undefined
      return response.blob()
    },
  })
}

export type Client = ReturnType<typeof createClient>
