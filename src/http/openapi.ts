import { dirname, join } from 'node:path'
import { toOpenAPISchema } from '@elysiajs/openapi'
import { OptionalKind, Type } from '@sinclair/typebox'
import { type AnyElysia, Elysia, t } from 'elysia'
import { notFound } from '../shared/errors'
import { finalizeDocument, type RouteSchemas } from './openapi-document'
import { GENERIC_PROBLEM, problemExamples } from './openapi-errors'

const PROBLEM_OPTIONS = {
  description: 'RFC 9457 problem details, served as application/problem+json',
  'x-schema-name': 'Problem',
}
export const Problem = t.Object(
  {
    type: t.String({ description: 'URI naming the kind of problem' }),
    title: t.String(),
    status: Type.Integer(),
    code: t.String({ description: 'stable snake_case machine code: branch on it, not on title or detail' }),
    detail: t.String(),
    errors: t.Optional(t.Array(t.Object({ field: t.String(), message: t.String() }))),
    request_id: t.String(),
  },
  PROBLEM_OPTIONS,
)

// The same schema, marked: a status that the document keeps only where the route can answer it.
const MaybeProblem = t.Object(Problem.properties, { ...PROBLEM_OPTIONS, [GENERIC_PROBLEM]: true })

/**
 * The error statuses any route may answer with, for the OpenAPI document, which keeps those that
 * apply to each route (openapi-errors.ts). A status listed with `Problem` itself is always kept.
 */
export const errorResponses = {
  400: MaybeProblem,
  401: MaybeProblem,
  403: MaybeProblem,
  404: MaybeProblem,
  405: MaybeProblem,
  408: MaybeProblem,
  409: MaybeProblem,
  413: MaybeProblem,
  414: MaybeProblem,
  415: MaybeProblem,
  422: MaybeProblem,
  429: MaybeProblem,
  431: MaybeProblem,
  500: MaybeProblem,
  503: MaybeProblem,
}

/** A response or upload body that is a file of one of `mediaTypes` (the document says so). */
export const Binary = (mediaTypes: string[], description: string) => t.Any({ description, 'x-media-types': mediaTypes })

const INFO = {
  title: 'GTIN product catalog and advertising service',
  version: '1.0.0',
  description:
    'Product catalog keyed by GTIN. Authenticate with an API key in the X-API-Key header. Ids are 22-character shortuuids (the canonical UUID form is accepted on input). Errors are RFC 9457 application/problem+json with a stable `code`. Every response carries X-Request-Id. Trailing slashes are part of each path; the other form redirects with 308.',
}

const SWAGGER_UI = dirname(Bun.resolveSync('swagger-ui-dist/package.json', import.meta.dir))
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
}

// The reference page: Swagger UI from the swagger-ui-dist package, served by the service itself,
// so it renders with no other host reachable.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${INFO.title}: API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>body { margin: 0 }</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: '/docs/json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null })
</script>
</body>
</html>
`

const asJson = (schema: unknown) => (schema === undefined ? undefined : JSON.parse(JSON.stringify(schema)))

function routeSchemas(route: AnyElysia['routes'][number]): RouteSchemas {
  const hooks = route.hooks as { body?: object; response?: Record<string, object>; detail?: { operationId?: string } }
  return {
    method: route.method,
    path: route.path,
    body: asJson(hooks.body),
    bodyOptional: hooks.body !== undefined && OptionalKind in hooks.body,
    responses: asJson(hooks.response),
    operationId: hooks.detail?.operationId,
  }
}

/**
 * `/docs` (rendered reference), `/docs/json` (OpenAPI 3.1, generated from the route schemas once,
 * then finalized by `finalizeDocument`) and `/docs/assets/*`. `app` is the application to describe.
 */
export function docs(app: () => AnyElysia) {
  let document: Promise<Record<string, unknown>> | null = null
  const build = async () => {
    // staticFile: false, or a path with a dot (/.well-known/gs1resolver) is taken for a static file and left out
    const { paths, components } = toOpenAPISchema(
      app(),
      { paths: [/^\/docs/], staticFile: false },
      undefined,
      undefined,
      '3.1.0',
    )
    return finalizeDocument(
      {
        openapi: '3.1.0',
        info: INFO,
        servers: [{ url: '/', description: 'this service' }],
        paths,
        components: {
          ...components,
          securitySchemes: {
            ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
            AdminToken: { type: 'apiKey', in: 'header', name: 'X-Admin-Token' },
          },
        },
      },
      app().routes.map(routeSchemas),
      await problemExamples(),
    )
  }
  return new Elysia({ name: 'docs' })
    .get('/docs', () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }), {
      detail: { hide: true },
    })
    .get(
      '/docs/json',
      async () => {
        document ??= build()
        return Response.json(await document)
      },
      { detail: { hide: true } },
    )
    .get(
      '/docs/assets/:file',
      ({ params }) => {
        const type = ASSETS[params.file]
        if (!type) throw notFound('asset')
        return new Response(Bun.file(join(SWAGGER_UI, params.file)), {
          headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' },
        })
      },
      { detail: { hide: true } },
    )
}
