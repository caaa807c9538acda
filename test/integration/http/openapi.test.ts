import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import openapiTS, { astToString } from 'openapi-typescript'
import { ROOT } from '../../support/process'
import { get } from '../../support/server'

// Generated files go under the repository (gitignored) so that the caller resolves openapi-fetch.
const work = join(ROOT, '.test-data', `openapi-${process.pid}`)
let doc: any

beforeAll(async () => {
  const res = await get('/docs/json')
  expect(res.status).toBe(200)
  doc = res.json
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  writeFileSync(join(work, 'openapi.json'), res.text)
})

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  )

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() }
}

describe('the OpenAPI document', () => {
  test('passes @redocly/cli lint (recommended rules, redocly.yaml)', () => {
    const r = run([
      join(ROOT, 'node_modules', '.bin', 'redocly'),
      'lint',
      join(work, 'openapi.json'),
      '--format=stylish',
    ])
    expect(r.out).toContain('Your API description is valid')
    expect(r.out).not.toMatch(/\berror\b.*\b(struct|no-|spec)/)
    // no warning either: invalid examples, errors that are not problem+json, unused components
    expect(r.out).not.toMatch(/^\s*\d+:\d+\s+warning\s/m)
    expect(r.out).not.toContain('You have')
    expect(r.code).toBe(0)
  }, 60_000)

  test('is valid against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
  })

  test('every request body has its schema; optional bodies are not required', () => {
    for (const { path, method, op } of operations()) {
      if (!['post', 'patch', 'put'].includes(method)) continue
      const content = op.requestBody?.content
      expect(content, `${method} ${path}`).toBeDefined()
      for (const [type, media] of Object.entries(content as Record<string, any>))
        expect(media.schema, `${method} ${path} ${type}`).toBeDefined()
    }
    const create = doc.paths['/products/api/v1/products'].post.requestBody
    expect(create.required).toBe(true)
    expect(create.content['application/json'].schema.required).toEqual(['gtin'])
    expect(doc.paths['/products/api/v1/products/{gtin}'].delete.requestBody.required).toBe(false)
    const batch = doc.paths['/products/api/v1/barcode/batch/'].post.requestBody.content
    expect(Object.keys(batch).sort()).toEqual(['application/json', 'text/csv'])
    expect(batch['application/json'].schema.properties.items.maxItems).toBe(10_000)
  })

  test('files and errors carry their real content types; 204 has no content', () => {
    const image = doc.paths['/products/api/v1/barcode/'].post.responses['200'].content
    expect(Object.keys(image).sort()).toEqual([
      'application/pdf',
      'application/postscript',
      'image/png',
      'image/svg+xml',
    ])
    const download = doc.paths['/products/api/v1/barcode/batch/{id}/download'].get.responses['200'].content
    expect(Object.keys(download).sort()).toEqual(['application/pdf', 'application/zip'])
    for (const { path, method, op } of operations())
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        if (status === '204') expect(response.content, `${method} ${path} 204`).toBeUndefined()
        if (Number(status) >= 400)
          expect(Object.keys(response.content), `${method} ${path} ${status}`).toEqual(['application/problem+json'])
      }
    expect(doc.components.schemas.Problem.required).toContain('code')
  })

  test('no non-standard keywords or coercion branches; enums and integer parameters as declared', () => {
    const text = JSON.stringify(doc)
    // Elysia's `error` keyword (a message string); a property named error is fine
    expect(text).not.toMatch(/"error":"/)
    expect(text).not.toContain('"x-field"')
    expect(text).not.toContain('"format":"integer"')
    const uom = doc.components.schemas.Product.properties.net_content_uom
    expect(JSON.stringify(uom)).toContain('"KGM"')
    const params = doc.paths['/products/api/v1/products'].get.parameters
    const page = params.find((p: any) => p.name === 'page')
    expect(page).toEqual({
      name: 'page',
      in: 'query',
      required: false,
      schema: {
        minimum: 1,
        maximum: 2147483647,
        default: 1,
        description: 'page number, from 1 (past the last page, data is empty)',
        type: 'integer',
        examples: [1],
      },
    })
    const id = doc.paths['/retailers/api/v1/retailers/{id}'].get.parameters.find((p: any) => p.name === 'id')
    expect(id.required).toBe(true)
    expect(id.schema.type).toBe('string')
  })

  test('a client generated by openapi-typescript type-checks a small caller (and rejects a wrong one)', async () => {
    writeFileSync(join(work, 'api.d.ts'), astToString(await openapiTS(structuredClone(doc))))
    const caller = `import createClient from 'openapi-fetch'
import type { paths } from './api'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { 'X-API-Key': 'gck_live_x' } })

export async function demo() {
  const created = await client.POST('/products/api/v1/products', {
    body: { gtin: '4006381333931', product_name: 'Oats', net_content_uom: 'GRM', metadata: { sku: '1' } },
  })
  if (created.data) {
    const gtin: string = created.data.gtin
    const claimed: boolean = created.data.is_claimed
    const uom: 'GRM' | 'KGM' | string | null = created.data.net_content_uom
    console.log(gtin, claimed, uom)
  }
  if (created.error) console.log(created.error.code, created.error.errors?.[0]?.field)
  const page = await client.GET('/products/api/v1/products', { params: { query: { page: 2, claimed: 'true' } } })
  const total: number | undefined = page.data?.pagination.total_count
  const retailer = await client.GET('/retailers/api/v1/retailers/{id}', { params: { path: { id: 'x' } } })
  console.log(total, retailer.data?.name)
  await client.DELETE('/products/api/v1/products/{gtin}', { params: { path: { gtin: '4006381333931' } } })
}
`
    const wrong = `import createClient from 'openapi-fetch'
import type { paths } from './api'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' })
export const bad = client.POST('/products/api/v1/products', { body: { product_name: 'no gtin' } })
`
    writeFileSync(join(work, 'caller.ts'), caller)
    writeFileSync(join(work, 'wrong.ts'), wrong)
    // both files in one tsc program (one process, not one per file; spawned, so the server in this
    // process keeps answering): every error must be in wrong.ts, none in caller.ts
    const proc = Bun.spawn(
      [
        join(ROOT, 'node_modules', '.bin', 'tsc'),
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--target',
        'es2022',
        '--module',
        'esnext',
        '--moduleResolution',
        'bundler',
        '--types',
        'node',
        join(work, 'caller.ts'),
        join(work, 'wrong.ts'),
      ],
      { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
    )
    const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()])
    const errors = out.split('\n').filter((l) => l.includes('error TS'))
    expect(errors.filter((e) => e.includes('caller.ts'))).toEqual([])
    expect(errors.length).toBeGreaterThan(0)
    expect(errors.every((e) => e.includes('wrong.ts'))).toBe(true)
    expect(code).not.toBe(0)
    expect(out).toContain("Property 'gtin' is missing")
  }, 60_000)
})
