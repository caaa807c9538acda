import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { FieldError } from '../shared/errors'

type Schema = Record<string, unknown> & { anyOf?: Schema[]; type?: string }
type ValueError = { path: string; message: string; schema: Schema; value: unknown; type: number }

/** Elysia wraps numbers in a numeric-string union for coercion; describe the numeric branch. */
function numericBranch(schema: Schema): Schema {
  const branches = schema.anyOf
  if (!branches) return schema
  const real = branches.find((b) => b.type === 'integer' || b.type === 'number')
  return real ? { ...real, ...schema, anyOf: undefined, type: real.type } : schema
}

function range(min: unknown, max: unknown, unit = ''): string {
  if (min !== undefined && max !== undefined) return `between ${min} and ${max}${unit}`
  if (min !== undefined) return `at least ${min}${unit}`
  return `at most ${max}${unit}`
}

function describe(schema: Schema, value?: unknown): string | null {
  if (typeof schema.error === 'string') return schema.error
  // a value outside a list of known slugs (`x-unknown` names what they are): say which value
  if (typeof schema['x-unknown'] === 'string' && typeof value === 'string') {
    const known = schema.anyOf?.map((b) => b.const) ?? []
    const list = known.length <= 30 ? `; known: ${known.join(', ')}` : ' (the OpenAPI document lists the known ones)'
    return `unknown ${schema['x-unknown']} ${JSON.stringify(value.slice(0, 100))}${list}`
  }
  if (schema.type === 'string' && value !== undefined && typeof value !== 'string') {
    const length =
      schema.maxLength !== undefined ? ` of ${range(schema.minLength, schema.maxLength, ' characters')}` : ''
    return `must be a string${length}; got ${jsonType(value)}`
  }
  if (schema.anyOf?.every((b) => 'const' in b)) return `must be one of: ${schema.anyOf.map((b) => b.const).join(', ')}`
  const s = numericBranch(schema)
  switch (s.type) {
    case 'integer':
    case 'number': {
      const kind = s.type === 'integer' ? 'an integer' : 'a number'
      if (s.minimum === undefined && s.maximum === undefined) return `must be ${kind}`
      return `must be ${kind} ${range(s.minimum, s.maximum)}`
    }
    case 'string':
      if (s.format === 'date-time') return 'must be an ISO 8601 date-time'
      if (s.minLength !== undefined || s.maxLength !== undefined) {
        const len = range(s.minLength, s.maxLength, ' characters')
        return s.pattern ? `must be ${len} matching ${s.pattern}` : `must be ${len}`
      }
      return s.pattern ? `must match ${s.pattern}` : 'must be a string'
    case 'boolean':
      return 'must be a boolean'
    case 'array':
      return s.maxItems !== undefined ? `must be an array of at most ${s.maxItems} items` : 'must be an array'
    case 'object':
      if (s.maxProperties !== undefined) return `must be an object of at most ${s.maxProperties} keys`
      return 'must be an object'
    default:
      return null
  }
}

const fieldOf = (path: string) => path.replace(/^\//, '').replaceAll('/', '.') || 'body'

const jsonType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v
const branchType = (b: Schema) => (b.type === 'integer' ? 'number' : b.type)

/**
 * A union error ("expected union value") says nothing useful; when exactly one branch has the
 * value's JSON type (metadata's object-or-null, a number beside its numeric-string coercion),
 * report that branch's own errors instead.
 */
function expandUnions(errors: ValueError[]): ValueError[] {
  return errors.flatMap((e) => {
    const branches = e.schema.anyOf
    if (!branches || e.value === undefined) return [e]
    const candidates = branches.filter((b) => branchType(b) === jsonType(e.value) && b.format === undefined)
    if (candidates.length !== 1) return [e]
    const inner = [...Value.Errors(candidates[0] as TSchema, e.value)] as unknown as ValueError[]
    if (inner.length === 0) return [e]
    return expandUnions(inner.map((i) => ({ ...i, path: e.path + i.path })))
  })
}

/** Field errors a client can act on, one per field, from TypeBox value errors. */
export function fieldErrors(errors: ValueError[]): FieldError[] {
  const byField = new Map<string, string>()
  for (const e of expandUnions(errors)) {
    const named = e.schema['x-field']
    // a repeatable query parameter's item is validated alone (path `/0`): its schema names it
    const field = (e.path === '' || /^\/\d+$/.test(e.path)) && typeof named === 'string' ? named : fieldOf(e.path)
    if (byField.has(field)) continue
    let message: string
    if (e.message === 'Expected required property') message = 'is required'
    else if (e.message === 'Unexpected property')
      message = field.startsWith('metadata.') ? 'metadata keys must be 1-40 characters' : 'is not an allowed field'
    else message = describe(e.schema, e.value) ?? e.message.toLowerCase()
    byField.set(field, message)
  }
  return [...byField].map(([field, message]) => ({ field, message }))
}
