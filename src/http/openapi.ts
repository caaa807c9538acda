import { openapi } from '@elysiajs/openapi'
import { t } from 'elysia'

export const Problem = t.Object(
  {
    type: t.String(),
    title: t.String(),
    status: t.Integer(),
    code: t.String({ description: 'stable snake_case machine code (contract §3)' }),
    detail: t.String(),
    errors: t.Optional(t.Array(t.Object({ field: t.String(), message: t.String() }))),
    request_id: t.String(),
  },
  { description: 'RFC 9457 problem details, served as application/problem+json' },
)

/** The error statuses any route may answer with, for the OpenAPI document. */
export const errorResponses = {
  400: Problem,
  401: Problem,
  403: Problem,
  404: Problem,
  409: Problem,
  413: Problem,
  415: Problem,
  422: Problem,
  429: Problem,
  500: Problem,
}

export const docs = openapi({
  path: '/docs',
  specPath: '/docs/json',
  documentation: {
    openapi: '3.1.0',
    info: {
      title: 'GTIN product catalog and advertising service',
      version: '1.0.0',
      description:
        'Product catalog keyed by GTIN. Authenticate with an API key in the X-API-Key header. Ids are 22-character shortuuids (the canonical UUID form is accepted on input). Errors are RFC 9457 problem+json with a stable `code`. Every response carries X-Request-Id. Trailing slashes are part of each path; the other form redirects with 308.',
    },
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        AdminToken: { type: 'apiKey', in: 'header', name: 'X-Admin-Token' },
      },
    },
  },
})
