/**
 * Turns the document @elysiajs/openapi generates into one that validators and client generators
 * accept. Request bodies and responses come from the routes' own schemas, which say what they mean
 * with two markers that this pass reads and removes:
 * - `x-schema-name`: the schema becomes `#/components/schemas/<name>`, referenced everywhere;
 *   a `Problem` response is served as `application/problem+json`.
 * - `x-media-types` on a response or body schema: the real content types (images, PDF, zip, CSV).
 * - `x-content-type` on a JSON response schema: its media type (application/linkset+json).
 * A body declared `t.Optional` is not required. It also drops what is not OpenAPI 3.1: Elysia's `error` messages, the string branch Elysia adds
 * to numbers for coercion, and the `content` of responses that have no body (204).
 */

type Json = Record<string, any>

const INTERNAL = ['error', 'x-field', 'x-schema-name', 'x-media-types', 'x-content-type']
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const PROBLEM_TYPE = 'application/problem+json'

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `{anyOf: [{type: string, format: integer}, {type: integer}]}` (Elysia's coercion) -> the number. */
function collapseCoercion(schema: Json): Json {
  const branches = schema.anyOf
  if (!Array.isArray(branches) || branches.length !== 2) return schema
  const numeric = branches.find((b) => b?.type === 'integer' || b?.type === 'number')
  const coercion = branches.find(
    (b) => b?.type === 'string' && ['integer', 'numeric', 'number'].includes(b.format as string),
  )
  if (!numeric || !coercion) return schema
  const { anyOf: _, ...outer } = schema
  return { ...outer, ...numeric }
}

/** Cleans one schema tree; named schemas are collected into `named` and replaced by references. */
function cleanSchema(schema: unknown, named: Map<string, Json>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => cleanSchema(s, named))
  if (!isObject(schema)) return schema
  const name = schema['x-schema-name']
  const collapsed = collapseCoercion(schema)
  const out: Json = {}
  for (const [key, value] of Object.entries(collapsed)) {
    if (INTERNAL.includes(key)) continue
    // `properties` and `patternProperties` map names to schemas: recurse into the values only
    out[key] =
      key === 'properties' || key === 'patternProperties' || key === '$defs'
        ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, cleanSchema(v, named)]))
        : key === 'examples' || key === 'default' || key === 'const' || key === 'enum'
          ? value
          : cleanSchema(value, named)
  }
  if (typeof name !== 'string') return out
  named.set(name, out)
  return { $ref: `#/components/schemas/${name}` }
}

const mediaTypesOf = (schema: unknown): string[] | null =>
  isObject(schema) && Array.isArray(schema['x-media-types']) ? (schema['x-media-types'] as string[]) : null

const binary = (type: string) =>
  type.startsWith('text/') || type === 'image/svg+xml' || type === 'application/postscript'
    ? { type: 'string' }
    : { type: 'string', contentMediaType: type }

function requestBody(schema: Json, optional: boolean, named: Map<string, Json>) {
  const content: Json = {}
  const branches: Json[] = Array.isArray(schema.anyOf) && !schema.type ? schema.anyOf : [schema]
  const json: Json[] = []
  for (const branch of branches) {
    const types = mediaTypesOf(branch)
    if (types)
      for (const type of types) content[type] = { schema: { ...binary(type), description: branch.description } }
    else json.push(branch)
  }
  if (json.length === 1) content['application/json'] = { schema: cleanSchema(json[0], named) }
  else if (json.length > 1) content['application/json'] = { schema: cleanSchema({ anyOf: json }, named) }
  return { content, required: !optional }
}

function response(status: string, schema: Json, named: Map<string, Json>) {
  const types = mediaTypesOf(schema)
  const description = (schema.description as string | undefined) ?? `Response for status ${status}`
  if (types) return { description, content: Object.fromEntries(types.map((t) => [t, { schema: binary(t) }])) }
  // t.Void(): no body
  if (status === '204' || schema.type === 'void' || schema.type === 'undefined') return { description }
  const cleaned = cleanSchema(schema, named) as Json
  const type =
    (schema['x-content-type'] as string | undefined) ??
    (cleaned.$ref === '#/components/schemas/Problem' ? PROBLEM_TYPE : 'application/json')
  return { description, content: { [type]: { schema: cleaned } } }
}

/** What the document needs of each route: its body and response schemas, as JSON. */
export type RouteSchemas = { method: string; path: string; body?: Json; bodyOptional: boolean; responses?: Json }

const toOpenApiPath = (path: string) => path.replace(/:([^/]+)/g, '{$1}')

/**
 * The generated document with request bodies and responses taken from the routes' own schemas
 * (the generator leaves bodies empty when a global parser exists, and loses custom keywords).
 */
export function finalizeDocument(doc: Json, routes: RouteSchemas[]): Json {
  const named = new Map<string, Json>()
  const byOperation = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${toOpenApiPath(r.path)}`, r]))
  const paths: Json = {}
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    const fixed: Json = {}
    for (const [method, op] of Object.entries(item as Json)) {
      if (!METHODS.includes(method)) {
        fixed[method] = op
        continue
      }
      const route = byOperation.get(`${method} ${path}`)
      const { requestBody: _, responses: __, ...operation } = op as Json
      if (operation.parameters)
        operation.parameters = operation.parameters.map((p: Json) => ({
          ...p,
          // a parameter with a default may be left out, whatever the generator says
          required: p.in === 'path' || (p.required === true && p.schema?.default === undefined),
          schema: cleanSchema(p.schema, named),
        }))
      if (route?.body) operation.requestBody = requestBody(route.body, route.bodyOptional, named)
      operation.responses = Object.fromEntries(
        Object.entries(route?.responses ?? {}).map(([status, schema]) => [status, response(status, schema, named)]),
      )
      fixed[method] = operation
    }
    paths[path] = fixed
  }
  const schemas = { ...(doc.components?.schemas ?? {}), ...Object.fromEntries(named) }
  return { ...doc, paths, components: { ...doc.components, schemas } }
}
