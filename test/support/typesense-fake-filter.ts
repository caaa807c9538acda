// The filter_by language of the Typesense stand-in (typesense.org/docs/29.0/api/search#filter-parameters),
// as far as our client uses it, and the shapes and errors the stand-in shares.

export type Field = {
  name: string
  type: string
  optional?: boolean
  index?: boolean
  facet?: boolean
  infix?: boolean
}
export type Schema = { name: string; fields: Field[] }
export type Doc = Record<string, unknown> & { id: string }

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}
export const fail = (status: number, message: string): never => {
  throw new ApiError(status, message)
}

// ---- filter_by: `field:=value`, `field:=[a,b]`, `field:!=[a,b]`, `&&`, `||`, parentheses

type Filter = (doc: Doc) => boolean
export function parseFilter(text: string, schema: Schema): Filter {
  let i = 0
  const ws = () => {
    while (text[i] === ' ') i++
  }
  const value = (): string => {
    ws()
    if (text[i] === '`') {
      const end = text.indexOf('`', i + 1)
      if (end < 0) fail(400, 'Could not parse the filter query: unbalanced backtick.')
      const v = text.slice(i + 1, end)
      i = end + 1
      return v
    }
    const m = /^[^,\]\s()&|]+/.exec(text.slice(i))
    if (!m) fail(400, `Could not parse the filter query at position ${i}.`)
    i += m![0].length
    return m![0]
  }
  const values = (): string[] => {
    ws()
    if (text[i] !== '[') return [value()]
    i++
    const out = [value()]
    ws()
    while (text[i] === ',') {
      i++
      out.push(value())
      ws()
    }
    if (text[i] !== ']') fail(400, 'Could not parse the filter query: expected `]`.')
    i++
    return out
  }
  const condition = (): Filter => {
    ws()
    if (text[i] === '(') {
      i++
      const inner = or()
      ws()
      if (text[i] !== ')') fail(400, 'Could not parse the filter query: unbalanced parentheses.')
      i++
      return inner
    }
    const m = /^([A-Za-z_][\w.]*)\s*:\s*(!=|=)?/.exec(text.slice(i))
    if (!m) fail(400, `Could not parse the filter query at position ${i}.`)
    const [whole, name, op] = m!
    i += whole.length
    const field = schema.fields.find((f) => f.name === name) ?? (name === 'id' ? { name: 'id', type: 'string' } : null)
    if (!field) fail(404, `Could not find a filter field named \`${name}\` in the schema.`)
    if (field!.index === false) fail(400, `Cannot filter on non-indexed field \`${name}\`.`)
    const wanted = values()
    const has = (doc: Doc) => {
      const v = doc[name!]
      const present = (Array.isArray(v) ? v : [v]).map(String)
      return wanted.some((w) => present.includes(w))
    }
    return op === '!=' ? (doc) => !has(doc) : has
  }
  const and = (): Filter => {
    const parts = [condition()]
    ws()
    while (text.startsWith('&&', i)) {
      i += 2
      parts.push(condition())
      ws()
    }
    return (doc) => parts.every((p) => p(doc))
  }
  const or = (): Filter => {
    const parts = [and()]
    ws()
    while (text.startsWith('||', i)) {
      i += 2
      parts.push(and())
      ws()
    }
    return (doc) => parts.some((p) => p(doc))
  }
  const filter = or()
  ws()
  if (i !== text.length) fail(400, `Could not parse the filter query at position ${i}.`)
  return filter
}
