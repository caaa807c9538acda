import { type AnyElysia, Elysia } from 'elysia'

/** Thrown to answer with a permanent redirect; the problems handler turns it into the 308. */
export class Redirect extends Error {
  constructor(readonly location: string) {
    super(`moved to ${location}`)
  }
}

const toggled = (path: string) => (path.endsWith('/') ? path.slice(0, -1) : `${path}/`)
const queryOf = (url: string) => {
  const q = url.indexOf('?')
  return q === -1 ? '' : url.slice(q)
}
/** The path as sent (Elysia's `path` gives the declared form for static routes). */
const sentPath = (url: string) => {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  return q === -1 ? url.slice(start) : url.slice(start, q)
}

let declared: RegExp[] = []

/** Records the app's routes, for the not-found check below; called once the app is composed. */
export function declareRoutes(app: AnyElysia) {
  declared = app.routes.map(
    (r) => new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`),
  )
}

/** For a path no route matches: the redirect to its other trailing-slash form, when that exists. */
export function redirectForUnmatched(request: Request): Redirect | null {
  const path = sentPath(request.url)
  if (path === '/') return null
  const other = toggled(path)
  return declared.some((r) => r.test(other)) ? new Redirect(other + queryOf(request.url)) : null
}

/**
 * Contract §2: trailing slashes are exactly as written; the other form redirects (308) to the
 * declared one. Elysia matches `/a` to a route `/a/` loosely: this turns that match into the
 * redirect. (`/a/` for a route `/a` matches nothing and is handled at not-found.)
 */
export const exactPaths = new Elysia({ name: 'exact-paths' }).onTransform({ as: 'global' }, ({ route, request }) => {
  const path = sentPath(request.url)
  if (!route || path === '/' || route.endsWith('/') === path.endsWith('/')) return
  throw new Redirect(toggled(path) + queryOf(request.url))
})
