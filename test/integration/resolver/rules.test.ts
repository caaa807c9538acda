import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createKey, createOrganization, expectProblem, sql, type TestOrg, tableCounts } from '../../support/fixtures'
import { del, get, patch, post } from '../../support/server'
import { createRule, ownedProduct, rulesPath } from './support'

const FIELDS = [
  'absolute_end_at',
  'absolute_start_at',
  'annual_end_mmdd',
  'annual_start_mmdd',
  'created',
  'custom_url',
  'days_of_week',
  'enabled',
  'hreflang',
  'id',
  'link_type',
  'location_cities',
  'location_countries',
  'location_regions',
  'media_type',
  'metadata',
  'modified',
  'order_index',
  'organization_id',
  'product_id',
  'scope_id',
  'scope_type',
  'section_anchor',
  'time_of_day_end',
  'time_of_day_start',
  'timezone',
  'title',
]

let org: TestOrg
let product: Awaited<ReturnType<typeof ownedProduct>>
beforeAll(async () => {
  org = await createOrganization()
  product = await ownedProduct(org)
})

const eventsOf = (ruleId: string) =>
  sql<{ event_type: string }>('select event_type from events where subject_id = $1 order by created', [parseId(ruleId)])

describe('resolution rules: create, get, patch, delete', () => {
  test('create: 201 with every field of the spec table, defaults filled, and resolution_rule.created', async () => {
    const res = await post(rulesPath(org), { scope_type: 'ORGANIZATION', custom_url: 'https://acme.example/' }, org.key)
    expect(res.status).toBe(201)
    expect(Object.keys(res.json).sort()).toEqual(FIELDS)
    expect(res.json).toMatchObject({
      organization_id: org.id,
      scope_type: 'ORGANIZATION',
      scope_id: org.id,
      product_id: null,
      order_index: 0,
      enabled: true,
      metadata: {},
      absolute_start_at: null,
      annual_start_mmdd: null,
      days_of_week: [],
      time_of_day_start: null,
      timezone: 'UTC',
      link_type: 'gs1:defaultLink',
      location_countries: [],
      custom_url: 'https://acme.example/',
      section_anchor: '',
      media_type: 'text/html',
      hreflang: ['en'],
    })
    expect((await eventsOf(res.json.id)).map((e) => e.event_type)).toEqual(['resolution_rule.created'])
    const got = await get(`${rulesPath(org)}/${res.json.id}`, org.key)
    expect(got.status).toBe(200)
    expect(got.json).toEqual(res.json)
  })

  test('every field round-trips, normalised (upper-case places, sorted weekdays)', async () => {
    const rule = await createRule(org, {
      scope_type: 'BATCH',
      product_id: product.id,
      scope_id: 'LOT-42',
      order_index: 3,
      enabled: false,
      absolute_start_at: '2026-01-01T00:00:00Z',
      absolute_end_at: '2026-12-31T00:00:00.000Z',
      annual_start_mmdd: '12-20',
      annual_end_mmdd: '01-05',
      days_of_week: [7, 1, 6],
      time_of_day_start: '22:00',
      time_of_day_end: '02:00',
      timezone: 'America/Los_Angeles',
      link_type: 'gs1:recallStatus',
      location_countries: ['us'],
      location_regions: ['us-ca'],
      location_cities: ['San Francisco'],
      custom_url: 'https://acme.example/recall?lot=42',
      section_anchor: 'details',
      title: 'Recall notice',
      media_type: 'text/html',
      hreflang: ['en', 'es'],
      metadata: { ticket: 'R-1' },
    })
    expect(rule).toMatchObject({
      scope_type: 'BATCH',
      scope_id: 'LOT-42',
      product_id: product.id,
      order_index: 3,
      enabled: false,
      absolute_start_at: '2026-01-01T00:00:00.000Z',
      absolute_end_at: '2026-12-31T00:00:00.000Z',
      days_of_week: [1, 6, 7],
      location_countries: ['US'],
      location_regions: ['US-CA'],
      location_cities: ['San Francisco'],
      hreflang: ['en', 'es'],
      metadata: { ticket: 'R-1' },
    })
  })

  test('patch: omitted fields kept, null clears, metadata merges, one resolution_rule.updated', async () => {
    const rule = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: product.id,
      custom_url: 'https://acme.example/p',
      time_of_day_start: '09:00',
      time_of_day_end: '17:00',
      metadata: { a: '1', b: '2' },
    })
    expect(rule.scope_id).toBe(product.id)
    const res = await patch(
      `${rulesPath(org)}/${rule.id}`,
      { time_of_day_start: null, time_of_day_end: null, order_index: 5, metadata: { a: '', c: '3' } },
      org.key,
    )
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      time_of_day_start: null,
      time_of_day_end: null,
      order_index: 5,
      custom_url: 'https://acme.example/p',
      metadata: { b: '2', c: '3' },
    })
    expect(res.json.modified > rule.modified).toBe(true)
    // an unchanged patch is no change and no event
    expect((await patch(`${rulesPath(org)}/${rule.id}`, { order_index: 5 }, org.key)).status).toBe(200)
    expect((await eventsOf(rule.id)).map((e) => e.event_type)).toEqual([
      'resolution_rule.created',
      'resolution_rule.updated',
    ])
    const [row] = await sql<{ order_index: number; metadata: unknown }>(
      'select order_index, metadata from resolution_rules where id = $1',
      [parseId(rule.id)],
    )
    expect(row).toEqual({ order_index: 5, metadata: { b: '2', c: '3' } })
  })

  test('patch: a move to another scope names the new target; the whole result is checked', async () => {
    const rule = await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: product.id,
      custom_url: 'https://x.example/',
    })
    const moved = await patch(`${rulesPath(org)}/${rule.id}`, { scope_type: 'ORGANIZATION' }, org.key)
    expect(moved.status).toBe(200)
    expect(moved.json).toMatchObject({ scope_type: 'ORGANIZATION', scope_id: org.id, product_id: null })
    // half a pair is refused against the stored other half
    const half = await patch(`${rulesPath(org)}/${rule.id}`, { annual_start_mmdd: '03-01' }, org.key)
    expectProblem(half, 422, 'validation_error')
    expect(half.json.errors[0].field).toBe('annual_end_mmdd')
  })

  test('delete: 204, gone afterwards (404), resolution_rule.deleted carries the rule as it was', async () => {
    const rule = await createRule(org, { scope_type: 'ORGANIZATION', custom_url: 'https://gone.example/' })
    const res = await del(`${rulesPath(org)}/${rule.id}`, org.key)
    expect(res.status).toBe(204)
    expectProblem(await get(`${rulesPath(org)}/${rule.id}`, org.key), 404, 'not_found')
    expectProblem(await del(`${rulesPath(org)}/${rule.id}`, org.key), 404, 'not_found')
    const [event] = await sql<{ data: { custom_url: string } }>(
      "select data from events where subject_id = $1 and event_type = 'resolution_rule.deleted'",
      [parseId(rule.id)],
    )
    expect(event!.data.custom_url).toBe('https://gone.example/')
  })
})

describe('resolution rules: scopes', () => {
  test('BRAND needs a brand of the organization; PRODUCT, BATCH and SERIAL need its product', async () => {
    const brand = await createRule(org, {
      scope_type: 'BRAND',
      scope_id: product.brandId,
      custom_url: 'https://b.example/',
    })
    expect(brand).toMatchObject({ scope_type: 'BRAND', scope_id: product.brandId, product_id: null })
    const serial = await createRule(org, {
      scope_type: 'SERIAL',
      product_id: product.id,
      scope_id: 'SN-0001',
      custom_url: 'https://s.example/',
    })
    expect(serial).toMatchObject({ scope_type: 'SERIAL', scope_id: 'SN-0001', product_id: product.id })
    const other = await createOrganization()
    const theirs = await ownedProduct(other, 'Other Brand')
    const cases: [Record<string, unknown>, string][] = [
      [{ scope_type: 'BRAND' }, 'scope_id'],
      [{ scope_type: 'BRAND', scope_id: theirs.brandId }, 'scope_id'],
      [{ scope_type: 'BRAND', scope_id: product.brandId, product_id: product.id }, 'product_id'],
      [{ scope_type: 'ORGANIZATION', scope_id: other.id }, 'scope_id'],
      [{ scope_type: 'ORGANIZATION', product_id: product.id }, 'product_id'],
      [{ scope_type: 'PRODUCT' }, 'product_id'],
      [{ scope_type: 'PRODUCT', product_id: theirs.id }, 'product_id'],
      [{ scope_type: 'PRODUCT', product_id: product.id, scope_id: theirs.id }, 'scope_id'],
      [{ scope_type: 'BATCH', product_id: product.id }, 'scope_id'],
      [{ scope_type: 'BATCH', scope_id: 'L1' }, 'product_id'],
      [{ scope_type: 'BATCH', product_id: product.id, scope_id: 'has space' }, 'scope_id'],
      [{ scope_type: 'SERIAL', product_id: product.id, scope_id: 'S'.repeat(21) }, 'scope_id'],
      [{ scope_type: 'SERIAL', product_id: theirs.id, scope_id: 'S1' }, 'product_id'],
    ]
    const before = await tableCounts()
    for (const [body, field] of cases) {
      const res = await post(rulesPath(org), { custom_url: 'https://x.example/', ...body }, org.key)
      expectProblem(res, 422, 'validation_error')
      expect({ body, field: res.json.errors?.[0]?.field }).toEqual({ body, field })
    }
    expect(await tableCounts()).toEqual(before)
  })
})

describe('resolution rules: validation of every field (422 naming it, nothing stored)', () => {
  const base = { scope_type: 'ORGANIZATION', custom_url: 'https://ok.example/' }
  const bad: [string, Record<string, unknown>][] = [
    ['scope_type', { scope_type: 'GLOBAL' }],
    ['scope_type', { scope_type: null }],
    ['custom_url', { custom_url: 'ftp://files.example/x' }],
    ['custom_url', { custom_url: '/relative/path' }],
    ['custom_url', { custom_url: `https://x.example/${'a'.repeat(2048)}` }],
    ['custom_url', { custom_url: null }],
    ['order_index', { order_index: -1 }],
    ['order_index', { order_index: 1.5 }],
    ['order_index', { order_index: '1' }],
    ['enabled', { enabled: 'yes' }],
    ['absolute_start_at', { absolute_start_at: 'tomorrow' }],
    ['absolute_end_at', { absolute_start_at: '2026-05-01T00:00:00Z', absolute_end_at: '2026-04-01T00:00:00Z' }],
    ['annual_start_mmdd', { annual_start_mmdd: '13-01', annual_end_mmdd: '12-31' }],
    ['annual_end_mmdd', { annual_start_mmdd: '01-01', annual_end_mmdd: '02-30' }],
    ['annual_start_mmdd', { annual_start_mmdd: '04-31', annual_end_mmdd: '05-01' }],
    ['annual_start_mmdd', { annual_start_mmdd: '1-5', annual_end_mmdd: '02-01' }],
    ['annual_end_mmdd', { annual_start_mmdd: '01-05' }],
    ['days_of_week', { days_of_week: [0] }],
    ['days_of_week', { days_of_week: [8] }],
    ['days_of_week', { days_of_week: [1, 1] }],
    ['days_of_week', { days_of_week: 'monday' }],
    ['time_of_day_start', { time_of_day_start: '24:00', time_of_day_end: '10:00' }],
    ['time_of_day_end', { time_of_day_start: '09:00', time_of_day_end: '9:30' }],
    ['time_of_day_end', { time_of_day_start: '09:00', time_of_day_end: '09:00' }],
    ['time_of_day_start', { time_of_day_end: '09:00' }],
    ['timezone', { timezone: 'Mars/Olympus_Mons' }],
    ['timezone', { timezone: 'utc' }],
    ['timezone', { timezone: 'PST8PDT; drop table' }],
    ['link_type', { link_type: 'pip' }],
    ['link_type', { link_type: 'gs1:notAType' }],
    ['link_type', { link_type: 'schema:url' }],
    ['location_countries', { location_countries: ['XX'] }],
    ['location_countries', { location_countries: ['USA'] }],
    ['location_regions', { location_regions: ['US-ZZ'] }],
    ['location_regions', { location_regions: ['CA'] }],
    ['location_cities', { location_cities: [''] }],
    ['section_anchor', { section_anchor: '#top' }],
    ['section_anchor', { section_anchor: 'two words' }],
    ['media_type', { media_type: 'html' }],
    ['hreflang', { hreflang: ['english'] }],
    ['metadata', { metadata: { k: 5 } }],
    ['title', { title: 'x'.repeat(256) }],
    ['unknown', { unknown: 1 }],
  ]
  test.each(bad)('%s: %j', async (field, body) => {
    const before = await tableCounts()
    const res = await post(rulesPath(org), { ...base, ...body }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors.map((e: { field: string }) => e.field.split('.')[0])).toContain(field)
    expect(await tableCounts()).toEqual(before)
  })

  test('the same checks on patch, leaving the rule as it was', async () => {
    const rule = await createRule(org, base)
    for (const [field, body] of bad.filter(
      ([f]) => !['scope_type', 'annual_end_mmdd', 'time_of_day_start'].includes(f),
    )) {
      const res = await patch(`${rulesPath(org)}/${rule.id}`, body, org.key)
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
      expect({ body, fields: res.json.errors.map((e: { field: string }) => e.field.split('.')[0]) }).toEqual({
        body,
        fields: [field],
      })
    }
    expect((await get(`${rulesPath(org)}/${rule.id}`, org.key)).json).toEqual(rule)
  })

  test('valid edge values are accepted: 02-29, a year-wrapping window, a midnight-wrapping time, a link zone', async () => {
    const rule = await createRule(org, {
      ...base,
      annual_start_mmdd: '12-01',
      annual_end_mmdd: '02-29',
      time_of_day_start: '23:30',
      time_of_day_end: '00:30',
      timezone: 'US/Pacific',
      link_type: 'gs1:allergenInfo',
    })
    expect(rule).toMatchObject({ annual_end_mmdd: '02-29', time_of_day_end: '00:30', timezone: 'US/Pacific' })
  })
})

describe('resolution rules: list, permissions and tenancy', () => {
  test('list (spec #2): scope_type and enabled filters, pagination envelope', async () => {
    const mine = await createOrganization()
    const p = await ownedProduct(mine)
    for (let i = 0; i < 3; i++)
      await createRule(mine, { scope_type: 'ORGANIZATION', custom_url: `https://o${i}.example/` })
    await createRule(mine, {
      scope_type: 'PRODUCT',
      product_id: p.id,
      custom_url: 'https://p.example/',
      enabled: false,
    })
    await createRule(mine, { scope_type: 'PRODUCT', product_id: p.id, custom_url: 'https://q.example/' })
    const all = await get(`${rulesPath(mine)}?page_size=2`, mine.key)
    expect(all.status).toBe(200)
    expect(all.json.pagination).toEqual({
      page: 1,
      page_size: 2,
      total_count: 5,
      total_pages: 3,
      has_next: true,
      has_previous: false,
    })
    const last = await get(`${rulesPath(mine)}?page_size=2&page=3`, mine.key)
    expect(last.json.data).toHaveLength(1)
    expect(last.json.pagination).toMatchObject({ has_next: false, has_previous: true })
    const past = await get(`${rulesPath(mine)}?page=9`, mine.key)
    expect(past.json.data).toEqual([])
    const products = await get(`${rulesPath(mine)}?scope_type=PRODUCT`, mine.key)
    expect(products.json.data.map((r: { custom_url: string }) => r.custom_url).sort()).toEqual([
      'https://p.example/',
      'https://q.example/',
    ])
    const disabled = await get(`${rulesPath(mine)}?enabled=false`, mine.key)
    expect(disabled.json.data.map((r: { custom_url: string }) => r.custom_url)).toEqual(['https://p.example/'])
    const enabled = await get(`${rulesPath(mine)}?enabled=true&scope_type=PRODUCT`, mine.key)
    expect(enabled.json.data.map((r: { custom_url: string }) => r.custom_url)).toEqual(['https://q.example/'])
    expectProblem(await get(`${rulesPath(mine)}?scope_type=GLOBAL`, mine.key), 422, 'validation_error')
    expectProblem(await get(`${rulesPath(mine)}?enabled=maybe`, mine.key), 422, 'validation_error')
    expectProblem(await get(`${rulesPath(mine)}?page_size=101`, mine.key), 422, 'validation_error')
    expectProblem(await get(`${rulesPath(mine)}?page=0`, mine.key), 422, 'validation_error')
  })

  test('roles: readonly may list and get (VIEW), not write; editor may write', async () => {
    const readonly = await createKey(org, 'readonly')
    const editor = await createKey(org, 'editor')
    expect((await get(rulesPath(org), readonly)).status).toBe(200)
    expectProblem(
      await post(rulesPath(org), { scope_type: 'ORGANIZATION', custom_url: 'https://r.example/' }, readonly),
      403,
      'forbidden',
    )
    const made = await post(rulesPath(org), { scope_type: 'ORGANIZATION', custom_url: 'https://e.example/' }, editor)
    expect(made.status).toBe(201)
    expectProblem(await patch(`${rulesPath(org)}/${made.json.id}`, { order_index: 1 }, readonly), 403, 'forbidden')
    expectProblem(await del(`${rulesPath(org)}/${made.json.id}`, readonly), 403, 'forbidden')
    expectProblem(await get(rulesPath(org)), 401, 'unauthenticated')
  })

  test("tenancy: another organization's path is 403, its rules are 404 under one's own path", async () => {
    const other = await createOrganization()
    const theirs = await createRule(other, { scope_type: 'ORGANIZATION', custom_url: 'https://theirs.example/' })
    expectProblem(await get(rulesPath(other), org.key), 403, 'forbidden')
    expectProblem(await get(`${rulesPath(other)}/${theirs.id}`, org.key), 403, 'forbidden')
    expectProblem(await get(`${rulesPath(org)}/${theirs.id}`, org.key), 404, 'not_found')
    expectProblem(await patch(`${rulesPath(org)}/${theirs.id}`, { order_index: 9 }, org.key), 404, 'not_found')
    expectProblem(await del(`${rulesPath(org)}/${theirs.id}`, org.key), 404, 'not_found')
    const listed = await get(rulesPath(org), org.key)
    expect(listed.json.data.some((r: { id: string }) => r.id === theirs.id)).toBe(false)
    expect((await get(`${rulesPath(other)}/${theirs.id}`, other.key)).json.order_index).toBe(0)
    expectProblem(await get(`${rulesPath(org)}/not-an-id`, org.key), 422, 'validation_error')
  })
})
