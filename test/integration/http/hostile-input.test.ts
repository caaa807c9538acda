import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  eventsSettled,
  eventually,
  expectProblem,
  sql,
  uniqueGtin,
} from '../../support/fixtures'
import { call, get, post } from '../../support/server'
import { waitingTestDelivery } from '../webhooks/waiting-delivery'

// Every class of hostile input, to every route, from the routes' own OpenAPI description: each
// gets 422 (400 for JSON that does not parse) as problem+json naming the place, and no table
// changes. Malformed parts are sent one at a time into an otherwise valid request.

type Operation = {
  parameters?: { name: string; in: 'path' | 'query'; schema: { type?: string; anyOf?: { type?: string }[] } }[]
  requestBody?: { content: Record<string, unknown> }
}
const doc = (await get('/docs/json')).json as { paths: Record<string, Record<string, Operation>> }

/** A hash of every table's rows: compared before and after, it shows that nothing was written. */
async function tableHashes() {
  const tables = await sql<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like '__drizzle%' order by 1`,
  )
  const out: Record<string, string> = {}
  for (const { name } of tables)
    out[name] = (
      await sql<{ h: string }>(`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) h from ${name} t`)
    )[0]!.h
  return out
}

const org = await createOrganization()
const gtin = uniqueGtin()
expect((await post('/products/api/v1/products', { gtin, product_name: 'Target' }, org.key)).status).toBe(201)
const retailer = (await post('/retailers/api/v1/retailers', { name: 'Target Retailer' }, org.key)).json.id
const member = (
  await post(
    `/account/api/v1/organizations/${org.id}/members`,
    { user_email: 'target@example.test', role: 'viewer' },
    org.key,
  )
).json.id
const keyId = (await post(`/account/api/v1/organizations/${org.id}/api-keys`, { name: 'target' }, org.key)).json.id
const batch = (
  await post('/products/api/v1/barcode/batch/', { items: [{ gtin: '4006381333931' }], output: 'zip' }, org.key)
).json.id

// switched off, so its waiting test delivery (queued before the pause; the API refuses a test to a
// switched-off endpoint) stays put and no background attempt changes a table mid-test
const endpointRow = (
  await post('/webhooks/api/v1/endpoints/', { url: 'https://93.184.215.14/hook', is_active: false }, org.key)
).json
const endpoint = endpointRow.id
const delivery = await waitingTestDelivery(endpointRow.signing_secret)

const rule = (
  await post(
    `/resolver/api/v1/organizations/${org.id}/resolution-rules`,
    { scope_type: 'ORGANIZATION', custom_url: 'https://h.example/' },
    org.key,
  )
).json.id

const campaign = (
  await post(
    `/advertising/api/v1/organizations/${org.id}/campaigns`,
    { name: 'Target Campaign', retailer_id: retailer, budget: '10', pricing_model: 'CPC', rate: '0.1' },
    org.key,
  )
).json.id

const pathValues: Record<string, string> = {
  organization_id: org.id,
  campaign_id: campaign,
  rule_id: rule,
  gtin,
  member_id: member,
  key_id: keyId,
  endpoint_id: endpoint,
  delivery_id: delivery,
}
const idFor = (path: string) => (path.includes('/batch/') ? batch : retailer)
const fill = (path: string, override: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => override[name] ?? pathValues[name] ?? idFor(path))

/** A valid body for each JSON write operation (the malformed value goes into a copy of it). */
const BASE: Record<string, unknown> = {
  'post /account/api/v1/organizations': { name: 'Hostile Org', owner_email: 'hostile@example.test' },
  'post /account/api/v1/organizations/{organization_id}/api-keys': { name: 'hostile key', description: 'd' },
  'post /account/api/v1/organizations/{organization_id}/members': { user_email: 'h@example.test', role: 'viewer' },
  'patch /account/api/v1/organizations/{organization_id}/members/{member_id}': { user_name: 'Hostile' },
  'post /account/api/v1/organizations/{organization_id}/ownership': { from_member_id: member, to_member_id: member },
  'post /retailers/api/v1/retailers': { name: 'Hostile Retailer', website: 'https://h.example' },
  'patch /retailers/api/v1/retailers/{id}': { name: 'Hostile Retailer', category: 'grocery' },
  'post /products/api/v1/products': { gtin: '4006381333931', product_name: 'Hostile', description: 'd' },
  'patch /products/api/v1/products/{gtin}': { product_name: 'Hostile', manufacturer: 'm' },
  'delete /products/api/v1/products/{gtin}': { organization_id: org.id },
  'post /products/api/v1/products/{gtin}/claim': {},
  'post /products/api/v1/products/{gtin}/contributions': { fields: { product_name: 'Hostile', description: 'd' } },
  // url is nullable (no url: the service's own notice page), so only the reason is varied
  'post /products/api/v1/products/{gtin}/recall/': { reason: 'Hostile recall' },
  'post /products/api/v1/barcode/': { gtin: '4006381333931', format: 'svg' },
  'post /products/api/v1/barcode/batch/': { items: [{ gtin: '4006381333931', label: 'l' }], output: 'zip' },
  'post /webhooks/api/v1/endpoints/': {
    url: 'https://93.184.215.14/hook',
    label: 'l',
    event_types: ['product.created'],
  },
  'patch /webhooks/api/v1/endpoints/{endpoint_id}/': { url: 'https://93.184.215.14/hook', label: 'l' },
  'post /webhooks/api/v1/endpoints/{endpoint_id}/rotate-secret/': {},
  'post /webhooks/api/v1/endpoints/{endpoint_id}/test/': {},
  'post /webhooks/api/v1/endpoints/{endpoint_id}/recover/': { since: '2026-01-01T00:00:00Z' },
  'post /webhooks/api/v1/deliveries/{delivery_id}/retry/': {},
  'post /resolver/api/v1/organizations/{organization_id}/resolution-rules': {
    scope_type: 'ORGANIZATION',
    custom_url: 'https://h.example/',
    title: 't',
  },
  'patch /resolver/api/v1/organizations/{organization_id}/resolution-rules/{rule_id}': {
    custom_url: 'https://h.example/',
    title: 'Hostile',
  },
  // the feed folder of the test server is empty: even the base body starts no run
  'post /feeds/api/v1/runs': { source: 'off', path: 'missing.jsonl', format: 'off_jsonl' },
  'post /advertising/api/v1/organizations/{organization_id}/campaigns': {
    name: 'Hostile Campaign',
    retailer_id: retailer,
    budget: '10.5',
    pricing_model: 'CPM',
    rate: '2',
  },
  'patch /advertising/api/v1/campaigns/{campaign_id}': { name: 'Hostile', budget: '1', status: 'active' },
  'post /advertising/api/v1/campaigns/{campaign_id}/performance': [
    { date: '2025-01-01', impressions: 1, clicks: 1, spend: '1', source: 'api' },
  ],
  'post /advertising/api/v1/revenue-share/calculate': { period: '2031-01', platform_fee_rate: '0.2' },
  'post /catalog/api/v1/search-keys': {
    type: ['product'],
    exclude_allergens: ['milk'],
    certifications: ['organic'],
    expires_in: 600,
  },
  'patch /advertising/api/v1/revenue-share/{organization_id}/{share_id}': {
    status: 'PAID',
    payment_transfer_id: 'tr_1',
  },
}

/** A JSON body with `member` added first to the object (or, for a list, to its first object). */
const injected = (base: unknown, member: string): string =>
  Array.isArray(base)
    ? `[${injected(base[0], member)}${base.length > 1 ? `,${JSON.stringify(base.slice(1)).slice(1)}` : ']'}`
    : JSON.stringify(base).replace(/^\{/, `{${member},`).replace(',}', '}')

/** Every string leaf of a value, as [path for errors, setter on a copy]. */
function stringLeaves(value: unknown, path = ''): { path: string; set: (copy: any, v: unknown) => void }[] {
  if (typeof value === 'string')
    return [
      {
        path,
        set: (copy, v) => {
          const keys = path
            .replace(/\[(\d+)\]/g, '.$1')
            .replace(/^\./, '')
            .split('.')
          let at = copy
          for (const k of keys.slice(0, -1)) at = at[k]
          at[keys.at(-1)!] = v
        },
      },
    ]
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, `${path}[${i}]`))
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, path ? `${path}.${k}` : k))
  return []
}

type Case = { label: string; method: string; path: string; raw?: string; expect: 400 | 422; field?: string }

function cases(): Case[] {
  const out: Case[] = []
  for (const [template, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const where = `${method.toUpperCase()} ${template}`
      const path = fill(template)
      // path parameters: a NUL, and ids that name no row id
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') {
          out.push({
            label: `${where}: NUL in ${p.name}`,
            method,
            path: fill(template, { [p.name]: 'a%00b' }),
            expect: 422,
          })
          // GS1 Digital Link key qualifiers: a value outside the AI's format is a malformed URI (400)
          if (['cpv', 'lot', 'serial'].includes(p.name))
            for (const bad of ['L'.repeat(21), 'two%20words', '%C3%A9t%C3%A9'])
              out.push({
                label: `${where}: ${p.name} ${bad}`,
                method,
                path: fill(template, { [p.name]: bad }),
                expect: 400,
              })
          // a compressed Digital Link that does not decompress names no resource: 404 like any unknown path
          else if (p.name !== 'gtin' && p.name !== 'file' && p.name !== 'compressed')
            for (const bad of ['z'.repeat(22), `${'M'.repeat(22)}EXTRA`, `xx-6ca4f0f8-2508-4bac-b8f1-5d1e3da2247a`])
              out.push({
                label: `${where}: id ${bad}`,
                method,
                path: fill(template, { [p.name]: bad }),
                expect: 422,
                field: p.name,
              })
        }
      }
      // query parameters: NUL, lone surrogate, numbers not written in decimal, huge, bad ids
      const isInteger = (s: Operation['parameters'] extends (infer P)[] | undefined ? P : never) =>
        s.schema.type === 'integer' || (s.schema.anyOf ?? []).some((b) => b.type === 'integer')
      for (const p of (op.parameters ?? []).filter((q) => q.in === 'query')) {
        const q = (v: string) => `${path}?${p.name}=${v}`
        out.push({ label: `${where}: NUL in ?${p.name}`, method, path: q('a%00b'), expect: 422, field: p.name })
        out.push({
          label: `${where}: lone surrogate in ?${p.name}`,
          method,
          path: q('%ED%A0%80'),
          expect: 422,
          field: p.name,
        })
        if (isInteger(p))
          for (const v of ['0x10', '1e3', '%2B1', '%201', '01', '99999999999999999999', '1.5'])
            out.push({ label: `${where}: ?${p.name}=${v}`, method, path: q(v), expect: 422, field: p.name })
        if (p.name.endsWith('_id'))
          out.push({
            label: `${where}: ?${p.name} overflow`,
            method,
            path: q('z'.repeat(22)),
            expect: 422,
            field: p.name,
          })
      }
      // JSON bodies
      if (!op.requestBody?.content['application/json']) continue
      const base = BASE[`${method} ${template}`]
      expect(base).toBeDefined() // a new JSON route needs its valid body here
      out.push({ label: `${where}: unparseable JSON`, method, path, raw: '{"name":', expect: 400 })
      out.push({
        label: `${where}: nested 50,000 deep`,
        method,
        path,
        raw: `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
        expect: 422,
      })
      out.push({
        label: `${where}: __proto__ key`,
        method,
        path,
        raw: injected(base, '"__proto__":{"x":"1"}'),
        expect: 422,
        field: Array.isArray(base) ? '[0].__proto__' : '__proto__',
      })
      const withMetadata = injected(base, '"metadata":{"__proto__":"x"}')
      out.push({ label: `${where}: __proto__ metadata key`, method, path, raw: withMetadata, expect: 422 })
      for (const leaf of stringLeaves(base)) {
        if (leaf.path === 'organization_id') continue // nullable and checked as an id above
        const variant = (v: unknown) => {
          const copy = structuredClone(base)
          leaf.set(copy, v)
          return JSON.stringify(copy)
        }
        out.push({
          label: `${where}: NUL in ${leaf.path}`,
          method,
          path,
          raw: variant('a\u0000b'),
          expect: 422,
          field: leaf.path,
        })
        out.push({
          label: `${where}: lone surrogate in ${leaf.path}`,
          method,
          path,
          raw: variant('MARK').replace('MARK', '\\ud800'),
          expect: 422,
          field: leaf.path,
        })
        out.push({ label: `${where}: null for ${leaf.path}`, method, path, raw: variant(null), expect: 422 })
        out.push({ label: `${where}: number for ${leaf.path}`, method, path, raw: variant(12345), expect: 422 })
        out.push({
          label: `${where}: 1e400 for ${leaf.path}`,
          method,
          path,
          raw: variant('MARK').replace('"MARK"', '1e400'),
          expect: 422,
        })
      }
    }
  return out
}

describe('hostile input, to every route', () => {
  test('each class gets 422 (400 for unparseable JSON) as problem+json, and no table changes', async () => {
    const all = cases()
    expect(all.length).toBeGreaterThan(300)
    // the setup's events are consumed in the background (webhook fan-out), and its batch is rendered
    // and stored by a job: let both finish first
    await eventsSettled()
    await eventually(async () => {
      const [row] = await sql<{ status: string }>('select status from barcode_batches where id = $1', [parseId(batch)])
      return row?.status === 'succeeded' || row?.status === 'failed' ? row : null
    })
    const before = await tableHashes()
    const wrong: string[] = []
    for (const c of all) {
      const res = await call(c.method.toUpperCase(), c.path, {
        key: org.key,
        headers: { ...ADMIN, ...(c.raw !== undefined ? { 'content-type': 'application/json' } : {}) },
        raw: c.raw,
      })
      const problem = res.headers.get('content-type')?.startsWith('application/problem+json')
      const fields = (res.json?.errors ?? []).map((e: { field: string }) => e.field)
      const named =
        !c.field ||
        fields.some((f: string) => f === c.field || f.startsWith(`${c.field}.`) || f.startsWith(`${c.field}[`))
      if (res.status !== c.expect || !problem || !named)
        wrong.push(
          `${c.label}: ${res.status} ${JSON.stringify(res.json?.errors ?? res.json?.detail ?? res.text.slice(0, 80))}`,
        )
    }
    expect(wrong).toEqual([])
    expect(await tableHashes()).toEqual(before)
  }, 180_000)

  test('the problem body of a hostile request is a clean problem', async () => {
    const res = await call('POST', '/retailers/api/v1/retailers', {
      key: org.key,
      raw: '{"name":"a\\u0000b"}',
      headers: { 'content-type': 'application/json' },
    })
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors).toEqual([{ field: 'name', message: 'must not contain a NUL character' }])
  })
})
