/** The path of a request URL as sent, without parsing a URL object (hot path). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  return q === -1 ? url.slice(start) : url.slice(start, q)
}

/** The query string of a request URL, with its `?`, or empty. */
export function queryOf(url: string): string {
  const q = url.indexOf('?')
  return q === -1 ? '' : url.slice(q)
}

/** A regex matching the request paths of a route path (`:param` one segment, a final `*` the rest). */
export const toPattern = (path: string) =>
  new RegExp(
    `^${path
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/:[^/]+/g, '[^/]+')
      .replace(/\*$/, '.*')}$`,
  )
