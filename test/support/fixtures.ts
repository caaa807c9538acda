import { expect } from 'bun:test'
import pg from 'pg'
import { features } from '../../src/features'
import { drained } from './eventually'
import { databaseUrl, post } from './server'

export { eventually } from './eventually'

export const ADMIN = { 'x-admin-token': process.env.ADMIN_TOKEN ?? 'test-admin-token-0123456789' }
export const ORGS = '/account/api/v1/organizations'
export const RETAILERS = '/retailers/api/v1/retailers'
export const PRODUCTS = '/products/api/v1/products'

let counter = 0
export const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++counter}`

export type TestOrg = { id: string; key: string; keyId: string; ownerEmail: string }

/** A fresh organization with its owner and manager key, made through the admin endpoint. */
export async function createOrganization(extra: Record<string, unknown> = {}): Promise<TestOrg> {
  const ownerEmail = `${unique('owner')}@example.test`
  const res = await post(
    ORGS,
    { name: unique('Org'), owner_email: ownerEmail, owner_name: 'Olive Owner', ...extra },
    undefined,
    ADMIN,
  )
  expect(res.status).toBe(201)
  return { id: res.json.organization.id, key: res.json.api_key.key, keyId: res.json.api_key.id, ownerEmail }
}

/** A key of the given role in the organization. */
export async function createKey(org: TestOrg, role: 'manager' | 'editor' | 'readonly') {
  const res = await post(`${ORGS}/${org.id}/api-keys`, { name: `${role} key`, role }, org.key)
  expect(res.status).toBe(200)
  return res.json.key as string
}

let client: pg.Client | null = null
/** Direct SQL on the test database, to check stored state. */
export async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  if (!client) {
    client = new pg.Client({ connectionString: databaseUrl })
    client.on('error', () => {})
    await client.connect()
  }
  return (await client.query(text, params)).rows as T[]
}

export function expectProblem(res: { status: number; headers: Headers; json: any }, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toStartWith('application/problem+json')
  // No asymmetric matchers here: Bun's toMatchObject writes them into the received object.
  expect(res.json.status).toBe(status)
  expect(res.json.code).toBe(code)
  for (const field of ['type', 'title', 'detail']) expect(typeof res.json[field]).toBe('string')
  expect(res.json.request_id).toBe(res.headers.get('x-request-id'))
}

/**
 * Row counts of every table, to assert a rejected request changed nothing: counted once the
 * background work committed so far has settled, so that a job of an earlier test in the lane (a
 * run's event, a verification) is not read as this request's write, and one this request caused is.
 */
export async function tableCounts() {
  await eventsSettled()
  const rows = await sql<{ t: string; n: number }>(
    `select 'organizations' t, count(*)::int n from organizations union all select 'members', count(*)::int from members
     union all select 'api_keys', count(*)::int from api_keys union all select 'retailers', count(*)::int from retailers
     union all select 'events', count(*)::int from events union all select 'products', count(*)::int from products
     union all select 'brands', count(*)::int from brands union all select 'candidates', count(*)::int from product_candidates
     union all select 'resolution_rules', count(*)::int from resolution_rules`,
  )
  return Object.fromEntries(rows.map((r) => [r.t, r.n]))
}

/**
 * The background work a test comparing stored state must wait out: the queues committed events go
 * through (dispatch, then each feature's subscriber) and every feature's own queues (a promotion, a
 * claim's verification, the search drain: each writes the catalog after a request has returned).
 */
const BACKGROUND_QUEUES = [
  'events',
  ...features.flatMap((f) => ('subscribers' in f ? (f.subscribers ?? []).map((s) => s.queue.name) : [])),
  ...features.flatMap((f) => ('queues' in f ? (f.queues ?? []).map((q) => q.name) : [])),
]
/**
 * Waits until the events committed so far have been consumed and no feature's job is due or
 * running, so that a test comparing stored state sees no background write.
 */
export const eventsSettled = (ms = 20_000) => drained(BACKGROUND_QUEUES, sql, { ms })

export async function closeSql() {
  await client?.end()
  client = null
}

let gtinSeq = Math.floor(Math.random() * 1e6)
/** A fresh valid GTIN-13 (GS1 prefix 400-440, Germany: an ordinary trade-item range). */
export function uniqueGtin(): string {
  const body = `4${String(100000000000 + ((Date.now() % 1e7) * 1000 + (gtinSeq++ % 1000))).slice(-11)}`
  let sum = 0
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += Number(body[i]) * w
  return body + ((10 - (sum % 10)) % 10)
}

/** Every field of the product record: the spec's table and contract §5. */
export const PRODUCT_FIELDS = [
  'brand',
  'certifications',
  'claim_verification_status',
  'confidence_score',
  'contains_allergens',
  'country_of_origin',
  'created',
  'data_source',
  'date_label_compliance',
  'depth',
  'depth_uom',
  'description',
  'field_confidence',
  'gpc_brick_code',
  'gpc_class_code',
  'gpc_family_code',
  'gpc_segment_code',
  'gross_weight',
  'gross_weight_uom',
  'gtin',
  'height',
  'height_uom',
  'id',
  'image_url',
  'ingredients_text',
  'is_claimed',
  'length',
  'length_uom',
  'manufacturer',
  'may_contain_allergens',
  'metadata',
  'modified',
  'net_content',
  'net_content_uom',
  'net_content_value',
  'net_weight',
  'net_weight_uom',
  'owner_id',
  'product_name',
  'recall',
  'substances',
  'usage_instructions',
  'width',
  'width_uom',
]

/** The keys of a product row of catalog search (contract §5), sorted. */
export const PRODUCT_ROW_KEYS = [
  'brand',
  'certifications',
  'contains_allergens',
  'gtin',
  'id',
  'image_url',
  'match',
  'name',
  'rank',
  'substance_flags',
  'type',
]
