import type { ErrorCode } from '../shared/errors'
import { ERROR_HEADERS, errorResponses, GENERIC_PROBLEM, problemExampleComponents } from './openapi-errors'
import { annotateExamples, annotateParameter, mediaExample } from './openapi-examples'
import { fallbackOperationId, operationInfo } from './openapi-operations'

/**
 * Turns the document @elysiajs/openapi generates into one that validators and client generators
 * accept. Request bodies and responses come from the routes' own schemas, which say what they mean
 * with two markers that this pass reads and removes:
 * - `x-schema-name`: the schema becomes `#/components/schemas/<name>`, referenced everywhere;
 *   a `Problem` response is served as `application/problem+json`.
 * - `x-media-types` on a response or body schema: the real content types (images, PDF, zip, CSV).
 * - `x-content-type` on a JSON response schema: its media type (application/linkset+json).
 * - `x-problem-generic` on an error schema: listed by `errorResponses`, kept where it applies.
 * A body declared `t.Optional` is not required. It also drops what is not OpenAPI 3.1: Elysia's
 * `error` messages, the string branch Elysia adds to numbers for coercion, and the `content` of
 * responses that have no body (204).
 */

type Json = Record<string, any>

const INTERNAL = ['error', 'x-field', 'x-schema-name', 'x-media-types', 'x-content-type', GENERIC_PROBLEM]
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

/** What the document needs of each route: its body and response schemas, as JSON, and its own operation id. */
export type RouteSchemas = {
  method: string
  path: string
  body?: Json
  bodyOptional: boolean
  responses?: Json
  operationId?: string
}

const toOpenApiPath = (path: string) => path.replace(/:([^/]+)/g, '{$1}')

const isUpload = (body: Json | undefined) =>
  body !== undefined &&
  (mediaTypesOf(body) !== null || (Array.isArray(body.anyOf) && body.anyOf.some((b: Json) => mediaTypesOf(b))))

const isJsonType = (type: string) => type === 'application/json' || type.endsWith('+json')

/**
 * The generated document with request bodies and responses taken from the routes' own schemas
 * (the generator leaves bodies empty when a global parser exists, and loses custom keywords),
 * operation ids and summaries from the operation list, error responses as openapi-errors.ts
 * decides, and examples (openapi-examples.ts) for every field, body and JSON response.
 */
export function finalizeDocument(doc: Json, routes: RouteSchemas[], problems: Map<ErrorCode, Json>): Json {
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
      // a route marked `detail: { hide: true }` is not part of the API (the generator misses some)
      if ((op as Json).hide === true) continue
      const route = byOperation.get(`${method} ${path}`)
      const info = operationInfo(method, path)
      const { requestBody: _, responses: __, operationId: ___, hide: ____, ...operation } = op as Json
      const operationId = route?.operationId ?? info?.id ?? fallbackOperationId(method, path)
      if (info?.summary) operation.summary = info.summary
      if (operation.parameters)
        operation.parameters = operation.parameters.map((p: Json) => ({
          ...p,
          // a parameter with a default may be left out, whatever the generator says
          required: p.in === 'path' || (p.required === true && p.schema?.default === undefined),
          schema: cleanSchema(p.schema, named),
        }))
      if (route?.body) operation.requestBody = requestBody(route.body, route.bodyOptional, named)
      const declared = route?.responses ?? {}
      const shape = {
        method,
        path,
        operationId,
        security: operation.security,
        hasBody: route?.body !== undefined,
        upload: isUpload(route?.body),
        info,
      }
      const errors = errorResponses(shape, declared)
      // the errors refer to the Problem component: it is registered from the route's own schema
      const problem = Object.values(declared as Json).find((s) => (s as Json)['x-schema-name'] === 'Problem')
      if (problem && Object.keys(errors).length) cleanSchema(problem, named)
      operation.responses = {
        ...Object.fromEntries(
          Object.entries(declared)
            .filter(([status]) => Number(status) < 400)
            .map(([status, schema]) => [status, response(status, schema as Json, named)]),
        ),
        ...errors,
      }
      fixed[method] = { operationId, ...operation }
    }
    if (Object.keys(fixed).some((k) => METHODS.includes(k))) paths[path] = fixed
  }
  const schemas = { ...(doc.components?.schemas ?? {}), ...Object.fromEntries(named) }
  for (const [name, schema] of Object.entries(schemas)) if (name !== 'Problem') annotateExamples(schema, name)
  const examples = problemExampleComponents(paths, problems)
  const finished = { ...doc, paths, components: { ...doc.components, schemas, headers: ERROR_HEADERS, examples } }
  addMediaExamples(finished)
  return finished
}

/** Examples of every parameter, JSON body and JSON response that has none (fields first, then wholes). */
function addMediaExamples(doc: Json) {
  const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ op: op as Json, info: operationInfo(method, path) })),
  )
  const media: Json[] = []
  const json = (content: Json | undefined) =>
    Object.entries(content ?? {})
      .filter(([type, m]) => isJsonType(type) && (m as Json).schema)
      .map(([, m]) => m as Json)
  for (const { op, info } of operations) {
    for (const p of op.parameters ?? []) annotateParameter(p)
    for (const [type, example] of Object.entries(info?.uploads ?? {})) {
      const upload = op.requestBody?.content?.[type]
      if (upload) upload.example = example
    }
    const responses = Object.entries(op.responses as Json)
      .filter(([status]) => Number(status) < 400)
      .flatMap(([, r]) => json((r as Json).content))
    // a body's fields read as those of the resource it makes or changes (a retailer's `name`)
    const resource = responses
      .map((m) => /^#\/components\/schemas\/(\w+)$/.exec(m.schema.$ref ?? '')?.[1])
      .find(Boolean)
    for (const m of json(op.requestBody?.content)) annotateExamples(m.schema, resource)
    for (const m of responses) annotateExamples(m.schema)
    media.push(...json(op.requestBody?.content), ...responses)
  }
  for (const m of media)
    if (m.example === undefined && m.examples === undefined) m.example = mediaExample(m.schema, doc)
}
