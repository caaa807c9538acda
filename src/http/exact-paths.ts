import type { AnyElysia } from 'elysia'

const toPattern = (path: string) =>
  new RegExp(
    `^${path
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/:[^/]+/g, '[^/]+')
      .replace(/\*/g, '.*')}$`,
  )

/**
 * Elysia also serves `/a/` for a route `/a` and the reverse. Contract §2: trailing slashes are
 * exactly as written, and the other form redirects (308) to the one the route declares.
 */
export function exactPaths(app: AnyElysia) {
  const fixed = new Set(app.routes.filter((r) => !/[:*]/.test(r.path)).map((r) => r.path))
  const patterns = app.routes.filter((r) => /[:*]/.test(r.path)).map((r) => toPattern(r.path))
  const declared = (path: string) => fixed.has(path) || patterns.some((p) => p.test(path))
  return ({ request }: { request: Request }) => {
    const url = request.url
    const start = url.indexOf('/', url.indexOf('//') + 2)
    const q = url.indexOf('?', start)
    const path = q === -1 ? url.slice(start) : url.slice(start, q)
    if (path === '/' || declared(path)) return
    const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`
    if (!declared(other)) return
    return new Response(null, { status: 308, headers: { location: other + (q === -1 ? '' : url.slice(q)) } })
  }
}
