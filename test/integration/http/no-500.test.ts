import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { ADMIN, createOrganization, uniqueGtin } from '../../support/fixtures'
import { call, get, post } from '../../support/server'

// Property: whatever a caller sends to any route (generated from the routes' own OpenAPI
// description: path, query and JSON body, well-formed or not), the answer is never a 5xx.

type Schema = { type?: string; properties?: Record<string, Schema>; $ref?: string; anyOf?: Schema[]; enum?: unknown[] }
type Operation = {
  parameters?: { name: string; in: 'path' | 'query' }[]
  requestBody?: { content: Record<string, { schema: Schema }> }
}
const doc = (await get('/docs/json')).json as {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}
const resolve = (s: Schema | undefined): Schema | undefined =>
  s?.$ref ? doc.components.schemas[s.$ref.split('/').at(-1)!] : s

const org = await createOrganization()
const gtin = uniqueGtin()
await post('/products/api/v1/products', { gtin, product_name: 'Property' }, org.key)
const retailer = (await post('/retailers/api/v1/retailers', { name: 'Property Retailer' }, org.key)).json.id
const spareKey = (await post(`/account/api/v1/organizations/${org.id}/api-keys`, { name: 'spare' }, org.key)).json.id
const valid: Record<string, string[]> = {
  organization_id: [org.id],
  gtin: [gtin, `0${gtin}`, gtin.replace(/(\d{4})/, '$1-')],
  id: [retailer],
  key_id: [spareKey],
  member_id: [retailer],
  file: ['swagger-ui.css'],
}

/** Text a hostile or careless caller might send: any code units (lone surrogates, NUL), or plain. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 300 }),
  fc.constantFrom('', '0', '-1', '1e400', 'null', '__proto__', 'z'.repeat(22), '9'.repeat(30), '0x10', ' 1'),
)
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.double(),
    fc.constantFrom(null, true, false, 1e308, -0, Number.MAX_SAFE_INTEGER + 2),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
})).value

const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
)

/** A body near the schema: its own property names with generated values, sometimes more keys. */
function bodyFor(op: Operation) {
  const schema = resolve(op.requestBody?.content['application/json']?.schema)
  const branches = schema?.anyOf?.map(resolve) ?? [schema]
  const names = branches.flatMap((b) => Object.keys(b?.properties ?? {}))
  return fc.oneof(
    fc.record(Object.fromEntries(names.map((n) => [n, json])), { requiredKeys: [] }),
    json,
    fc.constantFrom('{', '[]', '{"a":1}{', '\u0000', '{"__proto__":{"x":1}}'),
  )
}

const request = fc.constantFrom(...operations).chain(({ path, method, op }) =>
  fc.record({
    method: fc.constant(method),
    path: fc
      .tuple(
        ...(op.parameters ?? [])
          .filter((p) => p.in === 'path')
          .map((p) => fc.oneof(fc.constantFrom(...(valid[p.name] ?? ['x'])), text).map((v) => [p.name, v] as const)),
      )
      .map((pairs) => pairs.reduce((acc, [name, v]) => acc.replace(`{${name}}`, encodeURIComponent(v)), path)),
    query: fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(...(op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name), 'x'),
          text,
        ),
        text,
      ),
      { maxLength: 3 },
    ),
    body: op.requestBody
      ? bodyFor(op).map((b) => (typeof b === 'string' ? b : JSON.stringify(b)))
      : fc.constant(undefined),
  }),
)

describe('no request makes a 5xx', () => {
  test('10,000 generated requests over every route', async () => {
    const seen: Record<number, number> = {}
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const qs = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
        const res = await call(r.method, qs ? `${r.path}?${qs}` : r.path, {
          key: org.key,
          raw: r.body,
          headers: { ...ADMIN, ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        })
        seen[res.status] = (seen[res.status] ?? 0) + 1
        if (process.env.TRACE_REQUESTS)
          console.error(res.status, r.method, r.path, JSON.stringify(r.body)?.slice(0, 200))
        return res.status < 500
      }),
      { numRuns: 10_000, seed: 20261124 },
    )
    // the generated requests did reach validation and the handlers, not just one refusal
    expect(seen[422]).toBeGreaterThan(1000)
    expect((seen[200] ?? 0) + (seen[201] ?? 0) + (seen[202] ?? 0)).toBeGreaterThan(100)
  }, 300_000)
})
