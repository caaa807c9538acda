import { Elysia } from 'elysia'
import { AppError } from '../shared/errors'
import { pathOf, toPattern } from './url'

export const JSON_LIMIT = 1024 * 1024
export const UPLOAD_LIMIT = 20 * 1024 * 1024
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

type Route = { path: string; method: string; hooks?: { body?: unknown } }
type Upload = { method: string; path: RegExp; types: string[] }

/** Media types other than JSON that a body schema declares (`x-media-types`, on it or a branch). */
function mediaTypes(schema: unknown): string[] {
  if (!schema || typeof schema !== 'object') return []
  const s = schema as { 'x-media-types'?: string[]; anyOf?: unknown[] }
  return [...(s['x-media-types'] ?? []), ...(s.anyOf ?? []).flatMap(mediaTypes)]
}

/** The routes that take uploads, read from their body schemas (the declaration on the route). */
function uploadsOf(routes: Route[]): Upload[] {
  return routes.flatMap((r) => {
    const types = mediaTypes(r.hooks?.body)
    return types.length ? [{ method: r.method, path: toPattern(r.path), types }] : []
  })
}

const isJson = (type: string) => type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type)

/**
 * Body rules of contract §3 for every route: JSON bodies only (415 otherwise), at most 1 MiB
 * (20 MiB for uploads, 413 beyond), and unparseable JSON is 400 `malformed_json`.
 */
export const bodyRules = (routes: () => Route[]) => {
  let uploads: Upload[] | null = null
  return new Elysia({ name: 'body-rules' })
    .onRequest(({ request }) => {
      if (!WITH_BODY.has(request.method)) return
      const length = request.headers.get('content-length')
      const chunked = request.headers.has('transfer-encoding')
      if (!chunked && (length === null || length === '0')) return
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
      uploads ??= uploadsOf(routes())
      const path = pathOf(request.url)
      const upload = uploads.find((u) => u.method === request.method && u.path.test(path))
      const limit = upload ? UPLOAD_LIMIT : JSON_LIMIT
      if (length !== null && Number(length) > limit)
        throw new AppError('payload_too_large', `the request body exceeds ${limit} bytes`)
      if (isJson(type) || upload?.types.includes(type)) return
      const accepted = ['application/json', ...(upload?.types ?? [])].join(' or ')
      throw new AppError('unsupported_media_type', `send the body as ${accepted}; got ${type || 'no content type'}`)
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const type = contentType.split(';')[0]!.trim().toLowerCase()
      if (isJson(type)) {
        const text = await request.text()
        if (text.length > JSON_LIMIT)
          throw new AppError('payload_too_large', `the request body exceeds ${JSON_LIMIT} bytes`)
        if (text.trim() === '') return {}
        try {
          return JSON.parse(text)
        } catch {
          throw new AppError('malformed_json', 'the request body is not valid JSON')
        }
      }
      if (type === 'text/csv') {
        const text = await request.text()
        if (text.length > UPLOAD_LIMIT)
          throw new AppError('payload_too_large', `the upload exceeds ${UPLOAD_LIMIT} bytes`)
        return text
      }
    })
}
