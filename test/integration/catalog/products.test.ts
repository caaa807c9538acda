import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  createKey,
  createOrganization,
  eventually,
  expectProblem,
  PRODUCT_FIELDS,
  PRODUCTS,
  sql,
  tableCounts,
  uniqueGtin,
} from '../../support/fixtures'
import { call, del, get, patch, post } from '../../support/server'

describe('create (spec #11)', () => {
  test('201 with every field present and its default; claimed for the key organization', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const res = await post(PRODUCTS, { gtin }, org.key)
    expect(res.status).toBe(201)
    expect(Object.keys(res.json).sort()).toEqual(PRODUCT_FIELDS)
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[2-9A-HJ-NP-Za-km-z]{22}$/),
      gtin: `0${gtin}`,
      product_name: '',
      is_claimed: true,
      data_source: 'claimed',
      confidence_score: 0,
      field_confidence: {},
      date_label_compliance: { ca_ab660: 'compliant', federal: 'unknown', notes: [] },
      metadata: {},
      brand: expect.any(String),
      manufacturer: '',
      description: '',
      image_url: '',
      country_of_origin: '',
      net_content: '',
      net_content_value: null,
      net_content_uom: null,
      owner_id: org.id,
      claim_verification_status: 'unverified',
      length: null,
      width: null,
      height: null,
      depth: null,
      length_uom: '',
      width_uom: '',
      height_uom: '',
      depth_uom: '',
      gross_weight: null,
      net_weight: null,
      gross_weight_uom: '',
      net_weight_uom: '',
      gpc_brick_code: '',
      gpc_class_code: '',
      gpc_family_code: '',
      gpc_segment_code: '',
      ingredients_text: '',
      usage_instructions: '',
      contains_allergens: [],
      may_contain_allergens: [],
      certifications: [],
      substances: [],
      recall: null,
      created: expect.any(String),
      modified: expect.any(String),
    })
    expect(res.json.brand).toBe('') // spec: empty when no brand is linked (issue 11: not the organization's name)
    expect(res.json.is_claimed).toBe(true) // the claim, not a brand, makes it claimed
    const events = await sql<{ event_type: string }>('select event_type from events where subject_id = $1', [
      parseId(res.json.id),
    ])
    expect(events.map((e) => e.event_type)).toEqual(['product.created'])
  })

  test('every field given comes back; GTIN in any form; prefix-matched claim; field confidence', async () => {
    const gtin = uniqueGtin()
    // a 12-digit prefix: a prefix belongs to one organization (issue 44), and a 7-digit one would
    // hold the GTINs other tests make in the same 100 s
    const org = await createOrganization({ gs1_company_prefixes: [gtin.slice(0, 12)] })
    const body = {
      gtin: `${gtin.slice(0, 4)}-${gtin.slice(4)}`,
      organization_id: org.id,
      product_name: 'Rolled Oats',
      description: 'Whole grain',
      country_of_origin: 'de',
      net_content: '500 g',
      brand: 'Acme Mills',
      manufacturer: 'Acme Mills GmbH',
      image_url: 'https://img.example/oats.png',
      net_content_value: 500,
      net_content_uom: 'GRM',
      length: 10,
      width: 5.5,
      height: 20,
      depth: 0,
      length_uom: 'CMT',
      width_uom: 'CMT',
      height_uom: 'CMT',
      depth_uom: 'CMT',
      gross_weight: 520,
      net_weight: 500,
      gross_weight_uom: 'GRM',
      net_weight_uom: 'GRM',
      gpc_brick_code: '10000250',
      gpc_class_code: '50202300',
      gpc_family_code: '50200000',
      gpc_segment_code: '50000000',
      usage_instructions: 'Store dry. BEST if Used by date on top.',
      metadata: { sku: 'OAT-1' },
    }
    const res = await post(PRODUCTS, body, org.key)
    expect(res.status).toBe(201)
    const { gtin: _, organization_id: __, country_of_origin: ___, ...rest } = body
    expect(res.json).toMatchObject({
      ...rest,
      gtin: `0${gtin}`,
      country_of_origin: 'DE',
      claim_verification_status: 'unverified', // a create records the claim; signals upgrade it
      is_claimed: true,
    })
    expect(res.json.field_confidence.product_name).toBe(1)
    expect(res.json.confidence_score).toBe(1)
    // the GS1 prefix signal, applied by the catalog.verify job, moves it to prefix_matched
    const verified = await eventually(async () => {
      const now = (await get(`${PRODUCTS}/${gtin}`, org.key)).json
      return now.claim_verification_status === 'prefix_matched' ? now : null
    })
    expect({ ...verified, claim_verification_status: 'unverified', modified: res.json.modified }).toEqual(res.json)
    const events = await sql<{ event_type: string; status: string }>(
      `select event_type, data->>'claim_verification_status' status from events where subject_id = $1 order by created, id`,
      [parseId(res.json.id)],
    )
    expect(events).toEqual([
      { event_type: 'product.created', status: 'unverified' },
      { event_type: 'product.updated', status: 'prefix_matched' },
    ])
  })

  test('409 gtin_exists for a GTIN already there, in any written form; nothing written', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const gtin = uniqueGtin()
    expect((await post(PRODUCTS, { gtin }, a.key)).status).toBe(201)
    const before = await tableCounts()
    expectProblem(await post(PRODUCTS, { gtin: `0${gtin}` }, b.key), 409, 'gtin_exists')
    expectProblem(await post(PRODUCTS, { gtin, product_name: 'again' }, a.key), 409, 'gtin_exists')
    expect(await tableCounts()).toEqual(before)
  })

  test('two concurrent creates of one GTIN: exactly one 201 and one 409', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    for (let round = 0; round < 5; round++) {
      const gtin = uniqueGtin()
      const results = await Promise.all([post(PRODUCTS, { gtin }, a.key), post(PRODUCTS, { gtin }, b.key)])
      expect(results.map((r) => r.status).sort()).toEqual([201, 409])
      const [row] = await sql<{ n: number }>('select count(*)::int n from products where gtin = $1', [`0${gtin}`])
      expect(row!.n).toBe(1)
    }
  })

  test.each([
    ['gtin 7 characters', { gtin: '1234567' }, 422, 'validation_error', 'gtin'],
    ['gtin 15 characters', { gtin: '012345678901234' }, 422, 'validation_error', 'gtin'],
    ['gtin bad check digit', { gtin: '4006381333932' }, 422, 'invalid_gtin', 'gtin'],
    ['gtin 9 digits', { gtin: '123456789' }, 422, 'invalid_gtin', 'gtin'],
    ['gtin restricted circulation', { gtin: '2001234567893' }, 422, 'invalid_gtin', 'gtin'],
    ['product_name 256', { product_name: 'n'.repeat(256) }, 422, 'validation_error', 'product_name'],
    ['net_content 101', { net_content: 'n'.repeat(101) }, 422, 'validation_error', 'net_content'],
    ['country_of_origin 3', { country_of_origin: 'DEU' }, 422, 'validation_error', 'country_of_origin'],
    ['country_of_origin digits', { country_of_origin: '12' }, 422, 'validation_error', 'country_of_origin'],
    ['uom 11', { length_uom: 'x'.repeat(11) }, 422, 'validation_error', 'length_uom'],
    ['gpc 7 digits', { gpc_brick_code: '1234567' }, 422, 'validation_error', 'gpc_brick_code'],
    ['gpc 9 digits', { gpc_class_code: '123456789' }, 422, 'validation_error', 'gpc_class_code'],
    ['gpc letters', { gpc_family_code: 'abcdefgh' }, 422, 'validation_error', 'gpc_family_code'],
    ['negative weight', { net_weight: -1 }, 422, 'validation_error', 'net_weight'],
    ['unknown uom code', { net_content_uom: 'XYZ' }, 422, 'validation_error', 'net_content_uom'],
    ['image_url relative', { image_url: '/img.png' }, 422, 'validation_error', 'image_url'],
    ['metadata key 41', { metadata: { ['k'.repeat(41)]: 'v' } }, 422, 'validation_error', `metadata.${'k'.repeat(41)}`],
    ['unknown field', { colour: 'red' }, 422, 'validation_error', 'colour'],
    ['sell-by in description', { description: 'Sell-by: see lid' }, 422, 'date_label_violation', 'description'],
    [
      'best before in product_name',
      { product_name: 'Milk, BEST BEFORE 12/26' },
      422,
      'date_label_violation',
      'product_name',
    ],
    ['expires on in net_content', { net_content: '1 l expires on cap' }, 422, 'date_label_violation', 'net_content'],
    [
      'sell by in usage_instructions',
      { usage_instructions: 'SELL  BY: 3 days' },
      422,
      'date_label_violation',
      'usage_instructions',
    ],
  ])('rejects %s and writes nothing', async (_, extra, status, code, field) => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await post(PRODUCTS, { gtin: uniqueGtin(), ...extra }, org.key)
    expectProblem(res, status, code)
    expect(res.json.errors.map((e: { field: string }) => e.field)).toContain(field)
    expect(await tableCounts()).toEqual(before)
  })

  test('date_label_violation names the field and the phrase', async () => {
    const org = await createOrganization()
    const res = await post(PRODUCTS, { gtin: uniqueGtin(), description: 'Sell  By: see lid' }, org.key)
    expect(res.json.errors).toEqual([{ field: 'description', message: expect.stringContaining('"sell by"') }])
  })

  test('limits accepted exactly: gtin 8 and 14 characters, name 255, net content 100, uom 10, gpc 8 or empty, country 2 or empty', async () => {
    const org = await createOrganization()
    const ok = async (body: Record<string, unknown>) => expect((await post(PRODUCTS, body, org.key)).status).toBe(201)
    await ok({ gtin: '96385074' })
    const g14 = `1${uniqueGtin()}`
    let sum = 0
    for (let i = 12, w = 3; i >= 0; i--, w = 4 - w) sum += Number(g14[i]) * w
    await ok({ gtin: g14.slice(0, 13) + ((10 - (sum % 10)) % 10) })
    await ok({
      gtin: uniqueGtin(),
      product_name: 'n'.repeat(255),
      net_content: 'c'.repeat(100),
      length_uom: 'u'.repeat(10),
      gpc_brick_code: '',
      country_of_origin: '',
      description: '',
    })
    await ok({ gtin: uniqueGtin(), gpc_segment_code: '50000000', country_of_origin: 'FR', product_name: '' })
  })

  test('organization_id of another organization is 403; readonly key 403; no key 401; nothing written', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const ro = await createKey(a, 'readonly')
    const before = await tableCounts()
    expectProblem(await post(PRODUCTS, { gtin: uniqueGtin(), organization_id: b.id }, a.key), 403, 'forbidden')
    expectProblem(await post(PRODUCTS, { gtin: uniqueGtin() }, ro), 403, 'forbidden')
    expectProblem(await call('POST', PRODUCTS, { body: { gtin: uniqueGtin() } }), 401, 'unauthenticated')
    expect(await tableCounts()).toEqual(before)
  })
})

describe('get, list, patch', () => {
  test('get by any GTIN form; 404 when absent; 422 for an invalid GTIN', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const created = (await post(PRODUCTS, { gtin, product_name: 'Tea' }, org.key)).json
    const other = await createOrganization()
    expect((await get(`${PRODUCTS}/${gtin}`, other.key)).json).toEqual(created) // the catalog is readable by any key
    expect((await get(`${PRODUCTS}/0${gtin}`, org.key)).json.id).toBe(created.id)
    expect((await get(`${PRODUCTS}/${gtin.slice(0, 6)}%20${gtin.slice(6)}`, org.key)).json.id).toBe(created.id)
    expectProblem(await get(`${PRODUCTS}/${uniqueGtin()}`, org.key), 404, 'not_found')
    expectProblem(await get(`${PRODUCTS}/4006381333932`, org.key), 422, 'invalid_gtin')
  })

  test('list filters by organization and claimed state, with pagination', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const gtins = [uniqueGtin(), uniqueGtin(), uniqueGtin()]
    for (const g of gtins) await post(PRODUCTS, { gtin: g }, a.key)
    await post(PRODUCTS, { gtin: uniqueGtin() }, b.key)
    await del(`${PRODUCTS}/${gtins[2]}`, a.key) // unclaimed now
    const mine = await get(`${PRODUCTS}?organization_id=${a.id}`, b.key)
    expect(mine.json.pagination.total_count).toBe(2)
    expect(mine.json.data.map((p: { gtin: string }) => p.gtin)).toEqual([`0${gtins[0]}`, `0${gtins[1]}`].sort())
    const page2 = await get(`${PRODUCTS}?organization_id=${a.id}&page=2&page_size=1`, a.key)
    expect(page2.json.pagination).toMatchObject({
      page: 2,
      page_size: 1,
      total_count: 2,
      has_next: false,
      has_previous: true,
    })
    const unclaimed = await get(`${PRODUCTS}?claimed=false&page_size=100`, a.key)
    expect(unclaimed.json.data.map((p: { gtin: string }) => p.gtin)).toContain(`0${gtins[2]}`)
    expect(unclaimed.json.data.every((p: { is_claimed: boolean }) => !p.is_claimed)).toBe(true)
    const claimed = await get(`${PRODUCTS}?claimed=true&organization_id=${a.id}`, a.key)
    expect(claimed.json.data.every((p: { is_claimed: boolean }) => p.is_claimed)).toBe(true)
    expectProblem(await get(`${PRODUCTS}?claimed=maybe`, a.key), 422, 'validation_error')
  })

  // the list maps its rows by hand (list-rows.ts): each kind of column comes out as the product's GET has it
  test('a listed product is its resource exactly', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const body = {
      gtin,
      product_name: 'Oat Drink',
      description: 'Best if used by the date on the cap',
      net_content: '1 l',
      net_content_value: 1,
      net_content_uom: 'LTR',
      length: 7.5,
      length_uom: 'cm',
      gross_weight: 1.05,
      gross_weight_uom: 'kg',
      ingredients_text: 'Water, oats (gluten), may contain nuts',
      usage_instructions: 'Shake well',
      metadata: { shelf: 'B2', batch: '7' },
    }
    expect((await post(PRODUCTS, body, org.key)).status).toBe(201)
    expect((await post(`${PRODUCTS}/${gtin}/recall/`, { reason: 'Seal may leak' }, org.key)).status).toBe(200)
    const one = (await get(`${PRODUCTS}/${gtin}`, org.key)).json
    expect(one.date_label_compliance.ca_ab660).toBe('compliant')
    expect(one.recall).toMatchObject({ reason: 'Seal may leak' })
    const listed = (await get(`${PRODUCTS}?organization_id=${org.id}`, org.key)).json.data
    expect(listed).toEqual([one])
  })

  test('patch: partial, metadata merge, compliance and ingredients re-run, product.updated', async () => {
    const org = await createOrganization()
    const gtin = uniqueGtin()
    const created = (await post(PRODUCTS, { gtin, product_name: 'Soup', metadata: { a: '1', b: '2' } }, org.key)).json
    await Bun.sleep(5) // so the patch's time is measurably later than the create's
    const res = await patch(
      `${PRODUCTS}/${gtin}`,
      { description: 'Hearty', metadata: { b: '', c: '3' }, brand: 'Souperb' },
      org.key,
    )
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      product_name: 'Soup',
      description: 'Hearty',
      metadata: { a: '1', c: '3' },
      brand: 'Souperb',
      is_claimed: true,
    })
    expect(res.json.id).toBe(created.id)
    // `modified` moves on with the write, `created` stays; the stored record says the same
    expect(new Date(res.json.modified).getTime()).toBeGreaterThan(new Date(created.modified).getTime())
    expect(res.json.created).toBe(created.created)
    const stored = (await get(`${PRODUCTS}/${gtin}`, org.key)).json
    expect(stored.modified).toBe(res.json.modified)
    const events = await sql<{ event_type: string }>(
      'select event_type from events where subject_id = $1 order by created, id',
      [parseId(created.id)],
    )
    expect(events.map((e) => e.event_type)).toEqual(['product.created', 'product.updated'])
    const before = await tableCounts()
    expectProblem(
      await patch(`${PRODUCTS}/${gtin}`, { description: 'Sell by Friday' }, org.key),
      422,
      'date_label_violation',
    )
    expectProblem(
      await patch(`${PRODUCTS}/${gtin}`, { product_name: 'x'.repeat(256) }, org.key),
      422,
      'validation_error',
    )
    expect(await tableCounts()).toEqual(before)
    expect((await get(`${PRODUCTS}/${gtin}`, org.key)).json.description).toBe('Hearty')
  })

  test('patch by another organization is 403, by a readonly key 403; unknown GTIN 404', async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const gtin = uniqueGtin()
    await post(PRODUCTS, { gtin, product_name: 'Mine' }, a.key)
    const ro = await createKey(a, 'readonly')
    const before = await tableCounts()
    expectProblem(await patch(`${PRODUCTS}/${gtin}`, { product_name: 'Theirs' }, b.key), 403, 'forbidden')
    expectProblem(await patch(`${PRODUCTS}/${gtin}`, { product_name: 'Theirs' }, ro), 403, 'forbidden')
    expectProblem(await patch(`${PRODUCTS}/${uniqueGtin()}`, { product_name: 'x' }, a.key), 404, 'not_found')
    expect(await tableCounts()).toEqual(before)
    expect((await get(`${PRODUCTS}/${gtin}`, a.key)).json.product_name).toBe('Mine')
  })
})
