import { Elysia } from 'elysia'
import { AppError } from '../shared/errors'
import { requestIdOf } from './request-context'
import { pathOf, queryOf, toPattern } from './url'

class Redirect extends Error {
  constructor(readonly location: string) {
    super(`moved to ${location}`)
  }
}

const toggled = (path: string) => (path.endsWith('/') ? path.slice(0, -1) : `${path}/`)

/**
 * The public resolver's routes, which take any path under them (`/01/*`) or any one segment
 * (`/:compressed`, a compressed Digital Link URI): GS1's resolver standard has them serve both
 * forms of a path as the same resource (contract §2), so neither form redirects, and they are no
 * "other form" of an unknown path.
 */
const servesBothForms = (route: string) => route.endsWith('*') || /^\/:[^/]+\/?$/.test(route)

/**
 * Contract §2: trailing slashes are exactly as written; the other form redirects (308) to the
 * declared one (the resolver's paths excepted: servesBothForms). Elysia matches `/a` to a route `/a/` loosely: the transform turns that match into
 * the redirect. `/a/` for a route `/a` matches nothing: at not-found, the other form is looked up
 * among `routes()` (the app's own, read on first use). Use before `problems`.
 */
export function exactPaths(routes: () => { path: string }[]) {
  let declared: RegExp[] | null = null
  const exists = (path: string) => {
    declared ??= routes()
      .filter((r) => !servesBothForms(r.path))
      .map((r) => toPattern(r.path))
    return declared.some((r) => r.test(path))
  }
  return new Elysia()
    .onTransform({ as: 'global' }, ({ route, request }) => {
      const path = pathOf(request.url)
      if (!route || path === '/' || route.endsWith('/') === path.endsWith('/') || servesBothForms(route)) return
      // Bun resolves dot segments in the URL after its router matched the raw target: a path
      // that is not the matched route's other form is no route at all, never a redirect
      if (!toPattern(route).test(toggled(path))) throw new AppError('not_found', 'no such route')
      throw new Redirect(toggled(path) + queryOf(request.url))
    })
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      let location = error instanceof Redirect ? error.location : null
      if (code === 'NOT_FOUND') {
        const path = pathOf(request.url)
        if (path !== '/' && exists(toggled(path))) location = toggled(path) + queryOf(request.url)
      }
      if (location === null) return
      set.status = 308 // for the request log
      return new Response(null, {
        status: 308,
        headers: { location, 'x-request-id': requestIdOf(request) },
      })
    })
}
