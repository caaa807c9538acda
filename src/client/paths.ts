/**
 * The routes whose path ends in '/' (contract §2). Eden Treaty builds paths from property names
 * and so drops that slash; the client puts it back instead of paying the server's 308 redirect.
 * test/integration/client/package.test.ts checks this list against the app's routes.
 */
export const TRAILING_SLASH_ROUTES = [
  '/products/api/v1/barcode/',
  '/products/api/v1/barcode/batch/',
  '/products/api/v1/barcode/batch/:id/',
  '/products/api/v1/products/:gtin/recall/',
  '/webhooks/api/v1/deliveries/',
  '/webhooks/api/v1/deliveries/:delivery_id/retry/',
  '/webhooks/api/v1/endpoints/',
  '/webhooks/api/v1/endpoints/:endpoint_id/',
  '/webhooks/api/v1/endpoints/:endpoint_id/recover/',
  '/webhooks/api/v1/endpoints/:endpoint_id/rotate-secret/',
  '/webhooks/api/v1/endpoints/:endpoint_id/test/',
]

const PATTERNS = TRAILING_SLASH_ROUTES.map((route) => new RegExp(`^${route.slice(0, -1).replace(/:[^/]+/g, '[^/]+')}$`))

/** The URL with the trailing slash its route needs (unchanged for every other route). */
export function withTrailingSlash(url: string): string {
  const parsed = new URL(url)
  if (!PATTERNS.some((p) => p.test(parsed.pathname))) return url
  parsed.pathname += '/'
  return parsed.href
}
