import { toPattern } from './url'

/** What the edge needs to know of a route before Elysia reads the body. */
export type RouteInfo = {
  method: string
  path: string
  pattern: RegExp
  /** who may call it, from the route's declared security */
  access: 'key' | 'key-or-admin' | 'optional' | 'admin' | 'public'
  /** media types other than JSON its body schema declares (`x-media-types`) */
  uploadTypes: string[]
  /** the most bytes of JSON body it takes, when its body schema declares more than the default (`x-json-limit`) */
  jsonLimit: number | null
  /** query parameters declared as numbers, and whether they are integers */
  numericQuery: Map<string, 'integer' | 'number'>
}

export type Route = {
  path: string
  method: string
  hooks?: { body?: unknown; query?: unknown; detail?: { security?: Record<string, unknown>[] } }
}

type Schema = {
  type?: string
  anyOf?: Schema[]
  properties?: Record<string, Schema>
  'x-media-types'?: string[]
  'x-json-limit'?: number
}

/** Media types other than JSON that a body schema declares (on it or a branch). */
function mediaTypes(schema: Schema | undefined): string[] {
  if (!schema || typeof schema !== 'object') return []
  return [...(schema['x-media-types'] ?? []), ...(schema.anyOf ?? []).flatMap(mediaTypes)]
}

/** The JSON body limit a body schema declares (on it or a branch), or null for the default. */
function jsonLimitOf(schema: Schema | undefined): number | null {
  if (!schema || typeof schema !== 'object') return null
  const limits = [schema['x-json-limit'], ...(schema.anyOf ?? []).map(jsonLimitOf)].filter(
    (n): n is number => typeof n === 'number',
  )
  return limits.length ? Math.max(...limits) : null
}

function numericKind(schema: Schema): 'integer' | 'number' | null {
  if (schema.type === 'integer' || schema.type === 'number') return schema.type
  for (const branch of schema.anyOf ?? []) {
    const kind = numericKind(branch)
    if (kind) return kind
  }
  return null
}

function accessOf(security: Record<string, unknown>[] | undefined): RouteInfo['access'] {
  if (!security?.length) return 'public'
  const admin = security.some((s) => 'AdminToken' in s)
  if (admin && security.some((s) => 'ApiKey' in s)) return 'key-or-admin'
  if (admin) return 'admin'
  if (security.some((s) => Object.keys(s).length === 0)) return 'optional'
  return 'key'
}

function describe(route: Route): RouteInfo {
  const query = route.hooks?.query as Schema | undefined
  const numericQuery = new Map<string, 'integer' | 'number'>()
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const kind = numericKind(schema)
    if (kind) numericQuery.set(name, kind)
  }
  return {
    method: route.method,
    path: route.path,
    pattern: toPattern(route.path),
    access: accessOf(route.hooks?.detail?.security),
    uploadTypes: mediaTypes(route.hooks?.body as Schema | undefined),
    jsonLimit: jsonLimitOf(route.hooks?.body as Schema | undefined),
    numericQuery,
  }
}

const firstSegment = (path: string) => {
  const end = path.indexOf('/', 1)
  return end === -1 ? path : path.slice(0, end)
}

/**
 * The app's routes as the edge sees them, read once on first use: which route a request is for
 * (to answer 401, 413, 415 or 422 before its body is read) and which methods a path has (405).
 */
export class RouteTable {
  #routes: RouteInfo[] | null = null
  constructor(private readonly source: () => Route[]) {}

  #bySegment: Map<string, RouteInfo[]> | null = null

  get routes(): RouteInfo[] {
    this.#routes ??= this.source()
      .filter((r) => r.method !== 'ALL')
      .map(describe)
    return this.#routes
  }

  /** The routes a path may be for, by its first segment (a route starting with a parameter may be for any). */
  #candidates(path: string): RouteInfo[] {
    if (!this.#bySegment) {
      const bySegment = new Map<string, RouteInfo[]>()
      const open = this.routes.filter((r) => /^\/[:*]/.test(r.path))
      for (const r of this.routes) {
        const segment = firstSegment(r.path)
        if (!bySegment.has(segment)) bySegment.set(segment, [...open])
        if (!open.includes(r)) bySegment.get(segment)!.push(r)
      }
      bySegment.set('', open)
      this.#bySegment = bySegment
    }
    return this.#bySegment.get(firstSegment(path)) ?? this.#bySegment.get('')!
  }

  match(method: string, path: string): RouteInfo | null {
    const lookup = method === 'HEAD' ? 'GET' : method
    return this.#candidates(path).find((r) => r.method === lookup && r.pattern.test(path)) ?? null
  }

  methodsFor(path: string): string[] {
    return [
      ...new Set(
        this.#candidates(path)
          .filter((r) => r.pattern.test(path))
          .map((r) => r.method),
      ),
    ]
  }
}
