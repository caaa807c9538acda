import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, PRODUCTS, RETAILERS, sql, uniqueGtin } from '../../support/fixtures'
import { call, get, post } from '../../support/server'

// The OpenAPI document as a product (issue 46): what a generated client and a reader of /docs get.
let doc: any

beforeAll(async () => {
  const res = await get('/docs/json')
  expect(res.status).toBe(200)
  doc = res.json
})

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op, name: `${method} ${path}` })),
  )
const byId = (id: string) => operations().find((o) => o.op.operationId === id)!.op
const ref = (schema: any) => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema)
// an error example is a component that each response refers to
const exampleValue = (e: any) => (e.$ref ? doc.components.examples[e.$ref.split('/').pop()].value : e.value)
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json')

describe('operation ids and summaries', () => {
  test('every operation has a verbNoun operationId, unique, and the ones a client expects', () => {
    const ids = operations().map((o) => o.op.operationId)
    for (const { name, op } of operations()) expect(op.operationId, name).toMatch(/^[a-z]+[A-Z][A-Za-z]+$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(
      expect.arrayContaining([
        'createProduct',
        'getProduct',
        'listProducts',
        'updateProduct',
        'claimProduct',
        'unclaimProduct',
        'contributeToProduct',
        'searchCatalog',
        'resolveDigitalLink',
        'createBarcodeBatch',
        'getBarcodeBatch',
        'downloadBarcodeBatch',
        'createWebhookEndpoint',
        'rotateWebhookSecret',
        'listRetailers',
        'createApiKey',
        'listResolutionRules',
        'getResolverDescription',
      ]),
    )
    expect(doc.paths['/products/api/v1/products'].post.operationId).toBe('createProduct')
    expect(doc.paths['/01/{gtin}/10/{lot}/21/{serial}'].get.operationId).toBe('resolveDigitalLinkWithLotAndSerial')
  })

  test('summaries are written for users: none cites an internal document', () => {
    for (const { name, op } of operations()) {
      expect(op.summary, name).toBeString()
      expect(op.summary, name).not.toMatch(/spec #|#\d/)
      expect(`${op.summary} ${op.description ?? ''}`, name).not.toMatch(/spec #|contract §|spec Conventions/)
    }
  })
})

describe('examples', () => {
  test('every JSON request body and every 2xx JSON response has an example', () => {
    let bodies = 0
    let responses = 0
    for (const { name, op } of operations()) {
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {}))
        if (isJson(type)) {
          expect(media.example ?? media.examples, `${name} body`).toBeDefined()
          bodies++
        }
      for (const [status, response] of Object.entries<any>(op.responses))
        if (status.startsWith('2'))
          for (const [type, media] of Object.entries<any>(response.content ?? {}))
            if (isJson(type)) {
              expect(media.example ?? media.examples, `${name} ${status}`).toBeDefined()
              responses++
            }
    }
    expect(bodies).toBeGreaterThanOrEqual(30)
    expect(responses).toBeGreaterThan(50)
  })

  test('every upload of text (CSV, TSV, JSON lines) has an example; binary uploads are described', () => {
    let uploads = 0
    for (const { name, op } of operations())
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        if (isJson(type)) continue
        if (type.startsWith('text/') || type.includes('ndjson') || type.includes('jsonl')) {
          expect(media.example, `${name} ${type}`).toBeString()
          uploads++
        } else expect(media.schema.contentMediaType, `${name} ${type}`).toBe(type)
      }
    expect(uploads).toBeGreaterThanOrEqual(6)
  })

  test('the batch CSV example is accepted by the service and stored as given', async () => {
    const org = await createOrganization()
    const csv = byId('createBarcodeBatch').requestBody.content['text/csv'].example
    const res = await call('POST', '/products/api/v1/barcode/batch/', {
      key: org.key,
      raw: csv,
      headers: { 'content-type': 'text/csv' },
    })
    expect(res.status).toBe(202)
    expect(res.json.total).toBe(2)
    const [row] = await sql<{ total: number; items: { gtin: string; label?: string }[] }>(
      'select total, items from barcode_batches where id = $1',
      [parseId(res.json.id)],
    )
    expect(row?.total).toBe(2)
    expect(row?.items.map((i) => i.label)).toEqual(['Organic Rolled Oats 500 g', 'Crunchy Muesli 750 g'])
  })

  test('examples look real: a GTIN with its check digit, shortuuid ids, ISO dates', () => {
    const product = byId('getProduct').responses['200'].content['application/json'].example
    expect(product.gtin).toMatch(/^\d{14}$/)
    const digits: number[] = [...product.gtin].map(Number)
    const sum = digits.slice(0, 13).reduce((s, d, i) => s + d * (i % 2 === 0 ? 3 : 1), 0)
    expect((10 - (sum % 10)) % 10).toBe(digits[13]!)
    expect(product.id).toMatch(/^[23456789A-HJ-NP-Za-km-z]{22}$/)
    expect(Number.isNaN(Date.parse(product.created))).toBe(false)
    expect(product.product_name).not.toBe('string')
    const listed = byId('listProducts').responses['200'].content['application/json'].example
    expect(listed.data[0].gtin).toBe(product.gtin)
    expect(listed.pagination).toMatchObject({ page: 1, has_next: false })
  })

  test('the create-product example is accepted by the service and stored as given', async () => {
    const org = await createOrganization()
    const example = byId('createProduct').requestBody.content['application/json'].example
    const gtin = uniqueGtin()
    const res = await post(PRODUCTS, { ...example, gtin, organization_id: org.id }, org.key)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ product_name: example.product_name, gpc_brick_code: example.gpc_brick_code })
    const [row] = await sql<{ product_name: string; country_of_origin: string }>(
      'select product_name, country_of_origin from products where gtin = $1',
      [`0${gtin}`],
    )
    expect(row).toEqual({ product_name: example.product_name, country_of_origin: example.country_of_origin })
  })

  test('the create-retailer example is accepted by the service and stored as given', async () => {
    const org = await createOrganization()
    const example = byId('createRetailer').requestBody.content['application/json'].example
    const res = await post(RETAILERS, example, org.key)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ name: example.name, gln: example.gln, website: example.website })
    const [row] = await sql<{ name: string; gln: string; organization_id: string | null }>(
      'select name, gln, organization_id::text from retailers where id = $1',
      [parseId(res.json.id)],
    )
    expect(row).toEqual({ name: example.name, gln: example.gln, organization_id: parseId(org.id) })
  })
})

describe('response schemas carry the request limits', () => {
  test("the product's fields read back with the limits they are written with", () => {
    const request = byId('createProduct').requestBody.content['application/json'].schema.properties
    const product = doc.components.schemas.Product.properties
    for (const field of ['gpc_brick_code', 'gpc_segment_code', 'country_of_origin', 'image_url']) {
      expect(product[field].maxLength, field).toBe(request[field].maxLength)
      expect(product[field].pattern, field).toBe(request[field].pattern)
    }
    expect(product.gpc_brick_code).toMatchObject({ maxLength: 8, pattern: '^([0-9]{8})?$' })
    for (const field of ['product_name', 'brand', 'description', 'net_content', 'ingredients_text', 'length_uom'])
      expect(product[field].maxLength, field).toBe(request[field].maxLength)
    expect(JSON.stringify(product.length)).toContain('"minimum":0')
  })

  test('every field a body and its 2xx response share has the same limits on both sides', () => {
    // written in more forms than read back: ids (UUID or shortuuid in, shortuuid out), GTINs (any
    // form in, GTIN-14 out), date-times and decimals (strict text in, canonical form out)
    const CANONICAL = new Set([
      'gtin',
      'product_id',
      'retailer_id',
      'absolute_start_at',
      'absolute_end_at',
      'since',
      'budget',
      'rate',
      'period',
      'platform_fee_rate',
    ])
    const KEYS = ['maxLength', 'pattern', 'minimum', 'maximum', 'maxItems']
    const object = (schema: any) => {
      const s = ref(schema)
      return s?.properties?.data?.items ? ref(s.properties.data.items) : s
    }
    const solid = (schema: any): any => {
      const s = ref(schema)
      const branches = (s?.anyOf ?? []).filter((b: any) => b.type !== 'null')
      return branches.length === 1 ? solid(branches[0]) : s
    }
    let compared = 0
    for (const { name, op } of operations()) {
      const request = object(op.requestBody?.content?.['application/json']?.schema)?.properties
      if (!request) continue
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const read = status.startsWith('2') && object(response.content?.['application/json']?.schema)?.properties
        if (!read) continue
        for (const [field, written] of Object.entries<any>(request)) {
          if (!read[field] || CANONICAL.has(field)) continue
          const [a, b] = [solid(written), solid(read[field])]
          for (const key of KEYS)
            if (a?.[key] !== undefined) expect(b?.[key], `${name} ${status} ${field}.${key}`).toEqual(a[key])
          compared++
        }
      }
    }
    expect(compared).toBeGreaterThan(100)
  })

  test("a retailer's fields read back with the limits they are written with", () => {
    const request = byId('createRetailer').requestBody.content['application/json'].schema.properties
    const retailer = doc.components.schemas.Retailer.properties
    for (const field of ['name', 'website', 'category'])
      expect(retailer[field].maxLength).toBe(request[field].maxLength)
    for (const field of ['website', 'gln']) expect(retailer[field].pattern).toBe(request[field].pattern)
    expect(retailer.marketplace_regions.maxItems).toBe(request.marketplace_regions.maxItems)
  })
})

describe('errors', () => {
  test('every 4xx and 5xx is application/problem+json with the Problem schema and an example per code', () => {
    for (const { name, op } of operations())
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue
        expect(Object.keys(response.content), `${name} ${status}`).toEqual(['application/problem+json'])
        const media = response.content['application/problem+json']
        expect(media.schema, `${name} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' })
        const examples = Object.values<any>(media.examples ?? {})
        expect(examples.length, `${name} ${status}`).toBeGreaterThan(0)
        for (const value of examples.map(exampleValue)) {
          expect(value.status, `${name} ${status}`).toBe(Number(status))
          expect(value.type).toStartWith('https://')
        }
      }
  })

  test('/readyz documents its 503 as problem+json with Retry-After', () => {
    const unready = doc.paths['/readyz'].get.responses['503']
    expect(Object.keys(unready.content)).toEqual(['application/problem+json'])
    expect(exampleValue(unready.content['application/problem+json'].examples.service_unavailable).code).toBe(
      'service_unavailable',
    )
    expect(unready.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' })
    expect(doc.components.headers['Retry-After'].schema.type).toBe('integer')
  })

  test('each operation lists the errors it can answer, and only those', () => {
    const statuses = (id: string) => Object.keys(byId(id).responses).map(Number)
    expect(statuses('getHealth')).not.toEqual(expect.arrayContaining([401]))
    for (const s of [401, 403, 409, 413, 415, 503]) expect(statuses('getHealth')).not.toContain(s)
    for (const s of [400, 401, 403, 409, 413, 415, 422, 503]) expect(statuses('createProduct')).toContain(s)
    for (const s of [400, 409, 413, 415]) expect(statuses('getProduct')).not.toContain(s)
    expect(statuses('getProduct')).toContain(404)
    expect(statuses('searchCatalog')).toContain(429)
    expect(statuses('createBarcodeBatch')).toContain(429)
    expect(statuses('downloadBarcodeBatch')).toEqual(expect.arrayContaining([409, 410]))
    const conflict = byId('createProduct').responses['409'].content['application/problem+json'].examples
    expect(Object.keys(conflict).sort()).toEqual(['conflict', 'gtin_exists'])
    const limited = byId('searchCatalog').responses['429'].headers
    expect(Object.keys(limited).sort()).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
    ])
  })

  test("an error's example is what the service sends", async () => {
    const res = await get(PRODUCTS)
    expect(res.status).toBe(401)
    const documented = byId('listProducts').responses['401'].content['application/problem+json'].examples
    const { request_id: _, ...example } = exampleValue(documented.unauthenticated)
    expect(res.json).toMatchObject(example)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
  })
})
