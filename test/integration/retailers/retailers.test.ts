import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createKey,
  createOrganization,
  expectProblem,
  RETAILERS,
  sql,
  tableCounts,
  unique,
} from '../../support/fixtures'
import { call, get, patch, post } from '../../support/server'

const FIELDS = [
  'category',
  'created',
  'gln',
  'id',
  'is_active',
  'is_canonical',
  'is_online',
  'is_physical',
  'marketplace_regions',
  'metadata',
  'name',
  'organization_id',
  'website',
]

describe('retailers', () => {
  test('create: 201 with spec defaults, and a retailer.created outbox event in the same transaction', async () => {
    const org = await createOrganization()
    const res = await post(RETAILERS, { name: 'GreenBasket Market' }, org.key)
    expect(res.status).toBe(201)
    expect(Object.keys(res.json).sort()).toEqual(FIELDS)
    expect(res.json).toMatchObject({
      name: 'GreenBasket Market',
      metadata: {},
      is_online: false,
      is_physical: false,
      website: '',
      gln: '',
      is_canonical: false,
      organization_id: org.id,
      marketplace_regions: [],
      category: '',
      is_active: true,
    })
    expect(res.json.id).toMatch(/^[2-9A-HJ-NP-Za-km-z]{22}$/)
    const events = await sql<{ event_type: string; data: unknown; organization_id: string }>(
      'select event_type, data, organization_id from events where subject_id = $1',
      [parseId(res.json.id)],
    )
    expect(events).toEqual([{ event_type: 'retailer.created', data: res.json, organization_id: parseId(org.id)! }])
  })

  test('create with every field; GLN check digit validated', async () => {
    const org = await createOrganization()
    const body = {
      name: 'Épicerie Lumière',
      is_online: true,
      is_physical: true,
      website: 'https://lumiere.example/shop',
      gln: '0614141000012',
      marketplace_regions: ['FR', 'BE', 'US-CA'],
      category: 'grocery',
      is_active: false,
      metadata: { source: 'feed' },
    }
    const res = await post(RETAILERS, body, org.key)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject(body)
    const before = await tableCounts()
    const bad = await post(RETAILERS, { ...body, gln: '0614141000013' }, org.key)
    expectProblem(bad, 422, 'validation_error')
    expect(bad.json.errors).toEqual([{ field: 'gln', message: 'has a wrong GS1 check digit' }])
    expect(await tableCounts()).toEqual(before)
  })

  test.each([
    ['name missing', {}, 'name'],
    ['name empty', { name: '' }, 'name'],
    ['name 256', { name: 'n'.repeat(256) }, 'name'],
    ['gln 12 digits', { name: 'x', gln: '061414100001' }, 'gln'],
    ['gln letters', { name: 'x', gln: '06141410000AB' }, 'gln'],
    ['website not absolute', { name: 'x', website: 'shop.example' }, 'website'],
    ['website 2049', { name: 'x', website: `https://a.example/${'p'.repeat(2031)}` }, 'website'],
    ['region lowercase', { name: 'x', marketplace_regions: ['us'] }, 'marketplace_regions.0'],
    ['category 256', { name: 'x', category: 'c'.repeat(256) }, 'category'],
    ['is_online not boolean', { name: 'x', is_online: 'yes' }, 'is_online'],
    ['unknown field', { name: 'x', colour: 'red' }, 'colour'],
    [
      'metadata too many keys',
      { name: 'x', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      'metadata',
    ],
  ])('create rejects %s with 422 and writes nothing', async (_, body, field) => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await post(RETAILERS, body, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors.map((e: { field: string }) => e.field)).toContain(field)
    expect(await tableCounts()).toEqual(before)
  })

  test('bounds accepted exactly: name 255, website 2048, category 255', async () => {
    const org = await createOrganization()
    const website = `https://a.example/${'p'.repeat(2048 - 18)}`
    expect(website).toHaveLength(2048)
    const res = await post(RETAILERS, { name: 'n'.repeat(255), website, category: 'c'.repeat(255) }, org.key)
    expect(res.status).toBe(201)
  })

  test('is_canonical only with the admin token', async () => {
    const org = await createOrganization()
    const before = await tableCounts()
    expectProblem(await post(RETAILERS, { name: 'x', is_canonical: true }, org.key), 403, 'forbidden')
    expect(await tableCounts()).toEqual(before)
    const res = await post(RETAILERS, { name: 'Canon', is_canonical: true }, org.key, ADMIN)
    expect(res.status).toBe(201)
    expect(res.json.is_canonical).toBe(true)
  })

  test('get and patch; metadata merge semantics; retailer.updated event', async () => {
    const org = await createOrganization()
    const created = (await post(RETAILERS, { name: 'Shop', metadata: { a: '1', b: '2', c: '3' } }, org.key)).json
    const got = await get(`${RETAILERS}/${created.id}`, org.key)
    expect(got.json).toEqual(created)
    expect((await get(`${RETAILERS}/${parseId(created.id)}`, org.key)).json).toEqual(created)

    const p1 = await patch(`${RETAILERS}/${created.id}`, { is_online: true, metadata: { b: '', d: '4' } }, org.key)
    expect(p1.status).toBe(200)
    expect(p1.json).toEqual({ ...created, is_online: true, metadata: { a: '1', c: '3', d: '4' } })
    const p2 = await patch(`${RETAILERS}/${created.id}`, { name: 'Shop 2' }, org.key)
    expect(p2.json.metadata).toEqual({ a: '1', c: '3', d: '4' }) // omitted metadata kept
    expect((await patch(`${RETAILERS}/${created.id}`, { metadata: {} }, org.key)).json.metadata).toEqual({})
    await patch(`${RETAILERS}/${created.id}`, { metadata: { x: '1' } }, org.key)
    expect((await patch(`${RETAILERS}/${created.id}`, { metadata: null }, org.key)).json.metadata).toEqual({})
    const events = await sql<{ event_type: string }>(
      'select event_type from events where subject_id = $1 order by created, id',
      [parseId(created.id)],
    )
    expect(events.map((e) => e.event_type)).toEqual(['retailer.created', ...Array(5).fill('retailer.updated')])
  })

  test('patch: metadata growing past 50 keys through a merge is 422 and changes nothing', async () => {
    const org = await createOrganization()
    const forty = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`a${i}`, 'v']))
    const created = (await post(RETAILERS, { name: 'Shop', metadata: forty }, org.key)).json
    const before = await tableCounts()
    const more = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`b${i}`, 'v']))
    const res = await patch(`${RETAILERS}/${created.id}`, { metadata: more, name: 'changed' }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(await tableCounts()).toEqual(before)
    expect((await get(`${RETAILERS}/${created.id}`, org.key)).json).toEqual(created)
  })

  test('patch rejects bad values (422) and a wrong GLN, changing nothing', async () => {
    const org = await createOrganization()
    const created = (await post(RETAILERS, { name: 'Shop' }, org.key)).json
    const before = await tableCounts()
    expectProblem(await patch(`${RETAILERS}/${created.id}`, { name: '' }, org.key), 422, 'validation_error')
    expectProblem(await patch(`${RETAILERS}/${created.id}`, { gln: '0614141000019' }, org.key), 422, 'validation_error')
    expectProblem(await patch(`${RETAILERS}/${created.id}`, { is_canonical: true }, org.key), 403, 'forbidden')
    expect(await tableCounts()).toEqual(before)
    expect((await get(`${RETAILERS}/${created.id}`, org.key)).json).toEqual(created)
  })

  test('list (spec #5): own and canonical retailers, search by name, organization filter, pagination', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const tag = unique('zq')
    for (const name of [`${tag} Alpha Mart`, `${tag} beta mart`, `${tag} Gamma`]) await post(RETAILERS, { name }, a.key)
    await post(RETAILERS, { name: `${tag} Hidden of B` }, b.key)
    await post(RETAILERS, { name: `${tag} Shared of B`, is_canonical: true }, b.key, ADMIN)

    const names = async (q: string, key = a.key) =>
      (await get(`${RETAILERS}?${q}`, key)).json.data.map((r: { name: string }) => r.name)
    expect(await names(`search=${tag}`)).toEqual([
      `${tag} Alpha Mart`,
      `${tag} beta mart`,
      `${tag} Gamma`,
      `${tag} Shared of B`,
    ])
    expect(await names(`search=A%20MART`)).toEqual([`${tag} Alpha Mart`, `${tag} beta mart`])
    expect(await names(`search=${tag}&organization_id=${b.id}`)).toEqual([`${tag} Shared of B`])
    expect(await names(`search=${tag}&organization_id=${a.id}`)).toHaveLength(3)
    expect(await names(`search=${tag}&organization_id=${parseId(a.id)}`)).toHaveLength(3)

    const page = await get(`${RETAILERS}?search=${tag}&page=2&page_size=3`, a.key)
    expect(page.json.pagination).toEqual({
      page: 2,
      page_size: 3,
      total_count: 4,
      total_pages: 2,
      has_next: false,
      has_previous: true,
    })
    expect(page.json.data).toHaveLength(1)
    for (const r of page.json.data) expect(Object.keys(r).sort()).toEqual(FIELDS)
    const past = await get(`${RETAILERS}?search=${tag}&page=3&page_size=3`, a.key)
    expect(past.json.data).toEqual([])
    expect(past.json.pagination.total_count).toBe(4)
    expect((await get(`${RETAILERS}?search=${'s'.repeat(255)}`, a.key)).status).toBe(200)
    for (const bad of [
      'page=0',
      'page_size=101',
      'page_size=0',
      'organization_id=nope',
      'search=',
      `search=${'s'.repeat(256)}`,
    ]) {
      const res = await get(`${RETAILERS}?${bad}`, a.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe(bad.split('=')[0])
    }
  })

  test("another organization's retailer: 404 on get and patch (403 on patch when canonical), unchanged", async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const mine = (await post(RETAILERS, { name: 'Private' }, b.key)).json
    const shared = (await post(RETAILERS, { name: 'Shared', is_canonical: true }, b.key, ADMIN)).json
    const before = await tableCounts()
    expectProblem(await get(`${RETAILERS}/${mine.id}`, a.key), 404, 'not_found')
    expectProblem(await patch(`${RETAILERS}/${mine.id}`, { name: 'pwned' }, a.key), 404, 'not_found')
    expect((await get(`${RETAILERS}/${shared.id}`, a.key)).json).toEqual(shared) // canonical: readable
    expectProblem(await patch(`${RETAILERS}/${shared.id}`, { name: 'pwned' }, a.key), 403, 'forbidden')
    expect(await tableCounts()).toEqual(before)
    expect((await get(`${RETAILERS}/${mine.id}`, b.key)).json.name).toBe('Private')
  })

  test('readonly key reads but cannot write (403); unauthenticated is 401', async () => {
    const org = await createOrganization()
    const ro = await createKey(org, 'readonly')
    const created = (await post(RETAILERS, { name: 'Shop' }, org.key)).json
    const before = await tableCounts()
    expect((await get(RETAILERS, ro)).status).toBe(200)
    expect((await get(`${RETAILERS}/${created.id}`, ro)).status).toBe(200)
    expectProblem(await post(RETAILERS, { name: 'x' }, ro), 403, 'forbidden')
    expectProblem(await patch(`${RETAILERS}/${created.id}`, { name: 'x' }, ro), 403, 'forbidden')
    expectProblem(await get(RETAILERS), 401, 'unauthenticated')
    expectProblem(await call('POST', RETAILERS, { body: { name: 'x' } }), 401, 'unauthenticated')
    expect(await tableCounts()).toEqual(before)
    const editor = await createKey(org, 'editor')
    expect((await post(RETAILERS, { name: 'by editor' }, editor)).status).toBe(201)
  })

  test('unknown retailer id is 404; malformed id is 422', async () => {
    const org = await createOrganization()
    expectProblem(await get(`${RETAILERS}/2222222222222222222222`, org.key), 404, 'not_found')
    expectProblem(await get(`${RETAILERS}/abc`, org.key), 422, 'validation_error')
  })
})
