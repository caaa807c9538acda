import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { auth } from '../../../src/http/auth'
import { problems } from '../../../src/http/problems'
import { requestContext } from '../../../src/http/request-context'
import {
  ADMIN,
  createKey,
  createOrganization,
  expectProblem,
  ORGS,
  PRODUCTS,
  RETAILERS,
  tableCounts,
} from '../../support/fixtures'
import { api, get, post } from '../../support/server'

// Route options written once: id parameters decoded by their schema (422 on anything that names
// no row id), and the auth modes a route can declare.

describe('id parameters: one schema decodes them, 422 on anything malformed', () => {
  const overflow = 'z'.repeat(22) // 22 alphabet characters, above 2^128
  const uuid = '6ca4f0f8-2508-4bac-b8f1-5d1e3da2247a'
  const malformed = [overflow, 'MLpZDiEXM4VsUryR9oE8ucEXTRA', `xx-${uuid}`, uuid.replaceAll('-', ''), `${uuid}0`]

  test('in paths', async () => {
    const org = await createOrganization()
    for (const id of malformed) {
      const res = await get(`${RETAILERS}/${id}`, org.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe('id')
      expectProblem(await get(`${ORGS}/${id}/members`, org.key), 422, 'validation_error')
    }
  })

  test('in queries: a list is never silently unfiltered', async () => {
    const org = await createOrganization()
    for (const id of malformed) {
      const res = await get(`${PRODUCTS}?organization_id=${encodeURIComponent(id)}`, org.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe('organization_id')
      expectProblem(
        await get(`${RETAILERS}?organization_id=${encodeURIComponent(id)}`, org.key),
        422,
        'validation_error',
      )
    }
  })

  test('in bodies, changing nothing', async () => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await post(PRODUCTS, { gtin: '4006381333931', organization_id: overflow }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(await tableCounts()).toEqual(before)
  })

  test('both written forms of a good id reach the same row', async () => {
    const org = await createOrganization()
    const created = await post(RETAILERS, { name: 'Id Forms' }, org.key)
    expect(created.status).toBe(201)
    const { parseId } = await import('../../../src/shared/ids')
    const byShort = await get(`${RETAILERS}/${created.json.id}`, org.key)
    const byUuid = await get(`${RETAILERS}/${parseId(created.json.id)!.toUpperCase()}`, org.key)
    expect(byShort.status).toBe(200)
    expect(byUuid.json).toEqual(byShort.json)
  })
})

describe('auth modes', () => {
  const app = new Elysia()
    .use(requestContext)
    .use(problems)
    .use(auth)
    .get('/anyone', ({ caller }) => ({ organization: caller?.organizationId ?? null }), { optionalAuth: true })
    .get('/operator', () => ({ ok: true }), { adminOnly: true })
    .get('/editors', ({ apiKey }) => ({ role: apiKey.role }), { auth: { role: 'editor' } })
    .listen({ port: 0, hostname: '127.0.0.1' })
  const probe = api(`http://127.0.0.1:${app.server!.port}`)
  afterAll(() => app.stop(true))

  test('optionalAuth: anonymous is served, a valid key is known, an invalid key is 401', async () => {
    const org = await createOrganization()
    expect(await probe.get('/anyone')).toMatchObject({ status: 200, json: { organization: null } })
    const keyed = await probe.get('/anyone', org.key)
    expect(keyed.status).toBe(200)
    expect(keyed.json.organization).toMatch(/^[0-9a-f-]{36}$/)
    expectProblem(await probe.get('/anyone', 'gck_live_not-a-key'), 401, 'unauthenticated')
  })

  test('adminOnly: 404 without the admin token (or with a wrong one), served with it', async () => {
    expectProblem(await probe.get('/operator'), 404, 'not_found')
    expectProblem(
      await probe.get('/operator', undefined, { 'x-admin-token': 'wrong-token-0123456789' }),
      404,
      'not_found',
    )
    expect(await probe.get('/operator', undefined, ADMIN)).toMatchObject({ status: 200, json: { ok: true } })
  })

  test('auth: 401 without a key, 403 below the role', async () => {
    const org = await createOrganization()
    expectProblem(await probe.get('/editors'), 401, 'unauthenticated')
    expectProblem(await probe.get('/editors', await createKey(org, 'readonly')), 403, 'forbidden')
    expect((await probe.get('/editors', await createKey(org, 'editor'))).json).toEqual({ role: 'editor' })
  })
})

describe('response schemas', () => {
  // A TypeBox transform anywhere in a response schema (Elysia's t.Integer and t.Numeric carry one)
  // makes Elysia run Value.Encode over every response of the route: a search spent a tenth of its
  // server time there. Responses use TypeBox's plain Type.Integer.
  const TRANSFORM = Symbol.for('TypeBox.Transform')
  const hasTransform = (schema: unknown, seen = new Set<unknown>()): boolean => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return false
    seen.add(schema)
    return TRANSFORM in schema || Object.values(schema).some((v) => hasTransform(v, seen))
  }

  test('carry no transform', async () => {
    const { createApp } = await import('../../../src/app')
    const withTransform = createApp().routes.flatMap((route) =>
      Object.entries((route.hooks as { response?: Record<string, unknown> }).response ?? {})
        .filter(([, schema]) => hasTransform(schema))
        .map(([status]) => `${route.method} ${route.path} ${status}`),
    )
    expect(withTransform).toEqual([])
  })
})
