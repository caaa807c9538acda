import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createKey, createOrganization, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { get, patch, post } from '../../support/server'
import { ADS, campaignsPath, createCampaign, createRetailer } from './support'

let org: TestOrg
let other: TestOrg
let retailer: string
beforeAll(async () => {
  ;[org, other] = await Promise.all([createOrganization(), createOrganization()])
  retailer = await createRetailer(org)
})

describe('campaigns: create, get, patch', () => {
  test('create: 201, a draft with decimal strings, USD, the allowed next states', async () => {
    const res = await post(
      campaignsPath(org),
      {
        name: 'Spring snacks',
        retailer_id: retailer,
        budget: '2500.5',
        pricing_model: 'CPM',
        rate: '4.125',
        start_date: '2026-03-01',
        end_date: '2026-05-31',
        metadata: { team: 'north' },
      },
      org.key,
    )
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({
      organization_id: org.id,
      retailer_id: retailer,
      name: 'Spring snacks',
      status: 'draft',
      allowed_next_statuses: ['active'],
      budget: '2500.50',
      pricing_model: 'CPM',
      rate: '4.125',
      currency: 'USD',
      start_date: '2026-03-01',
      end_date: '2026-05-31',
      metadata: { team: 'north' },
    })
    const [row] = await sql('select budget::text, rate::text from campaigns where id = $1', [parseId(res.json.id)])
    expect(row).toEqual({ budget: '2500.500000', rate: '4.125000' })
    const got = await get(`${ADS}/campaigns/${res.json.id}`, org.key)
    expect(got.status).toBe(200)
    expect(got.json).toEqual(res.json)
  })

  test('money must be a decimal string; bad dates, retailers and roles are refused and write nothing', async () => {
    const before = await sql<{ n: number }>('select count(*)::int n from campaigns')
    const base = { name: 'X', retailer_id: retailer, budget: '10', pricing_model: 'CPC', rate: '0.1' }
    const refused: [Record<string, unknown>, string][] = [
      [{ budget: 10.5 }, 'budget'],
      [{ budget: '-1' }, 'budget'],
      [{ budget: '1.1234567' }, 'budget'],
      [{ rate: '1e3' }, 'rate'],
      [{ pricing_model: 'CPA' }, 'pricing_model'],
      [{ start_date: '2026-02-30' }, 'start_date'],
      [{ start_date: '2026-05-01', end_date: '2026-04-30' }, 'end_date'],
      [{ name: '' }, 'name'],
      [{ status: 'active' }, 'status'],
    ]
    for (const [change, field] of refused) {
      const res = await post(campaignsPath(org), { ...base, ...change }, org.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors.map((e: { field: string }) => e.field).join(' ')).toContain(field)
    }
    // a retailer of another organization is not one this organization can advertise on
    const foreign = await createRetailer(other)
    const res = await post(campaignsPath(org), { ...base, retailer_id: foreign }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe('retailer_id')
    expectProblem(await post(campaignsPath(org), base, await createKey(org, 'readonly')), 403, 'forbidden')
    expectProblem(await post(campaignsPath(other), base, org.key), 403, 'forbidden')
    expect(await sql('select count(*)::int n from campaigns')).toEqual(before)
  })

  test("another organization's campaign is 404 to read and to change", async () => {
    const campaign = await createCampaign(org, retailer)
    expectProblem(await get(`${ADS}/campaigns/${campaign.id}`, other.key), 404, 'not_found')
    expectProblem(await patch(`${ADS}/campaigns/${campaign.id}`, { name: 'Stolen' }, other.key), 404, 'not_found')
    const [row] = await sql<{ name: string }>('select name from campaigns where name = $1', [campaign.name])
    expect(row?.name).toBe(campaign.name)
  })

  test('patch: fields change, metadata merges, null clears a date, the retailer only while a draft', async () => {
    const campaign = await createCampaign(org, retailer, { start_date: '2026-01-01', metadata: { a: '1' } })
    const second = await createRetailer(org)
    const res = await patch(
      `${ADS}/campaigns/${campaign.id}`,
      { budget: '99.999', start_date: null, metadata: { b: '2' }, retailer_id: second },
      org.key,
    )
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      budget: '99.999',
      start_date: null,
      metadata: { a: '1', b: '2' },
      retailer_id: second,
    })
    await patch(`${ADS}/campaigns/${campaign.id}`, { status: 'active' }, org.key)
    const moved = await patch(`${ADS}/campaigns/${campaign.id}`, { retailer_id: retailer }, org.key)
    expectProblem(moved, 409, 'conflict')
    const [row] = await sql<{ retailer_id: string }>(
      'select retailer_id from campaigns where budget = 99.999 and name = $1',
      [campaign.name],
    )
    expect(row).toBeDefined()
  })
})

describe('campaign status transitions', () => {
  const STATES = ['draft', 'active', 'paused', 'completed', 'archived'] as const
  const PATH_TO: Record<(typeof STATES)[number], string[]> = {
    draft: [],
    active: ['active'],
    paused: ['active', 'paused'],
    completed: ['active', 'completed'],
    archived: ['active', 'completed', 'archived'],
  }
  const ALLOWED: Record<string, string[]> = {
    draft: ['active'],
    active: ['paused', 'completed'],
    paused: ['active', 'completed'],
    completed: ['archived'],
    archived: [],
  }

  for (const from of STATES)
    for (const to of STATES) {
      if (from === to) continue
      const allowed = ALLOWED[from]!.includes(to)
      test(`${from} → ${to}: ${allowed ? '200' : '409'}`, async () => {
        const campaign = await createCampaign(org, retailer)
        for (const step of PATH_TO[from])
          expect((await patch(`${ADS}/campaigns/${campaign.id}`, { status: step }, org.key)).status).toBe(200)
        const res = await patch(`${ADS}/campaigns/${campaign.id}`, { status: to }, org.key)
        const [row] = await sql<{ status: string }>('select status from campaigns where name = $1', [campaign.name])
        if (allowed) {
          expect(res.status).toBe(200)
          expect(res.json.status).toBe(to)
          expect(res.json.allowed_next_statuses).toEqual(ALLOWED[to]!)
          expect(row!.status).toBe(to)
        } else {
          expectProblem(res, 409, 'conflict')
          const next = ALLOWED[from]!.length ? ALLOWED[from]!.join(', ') : 'none'
          expect(res.json.detail).toContain(`allowed next states: ${next}`)
          expect(row!.status).toBe(from)
        }
      })
    }

  test('the same status again is no move (200, unchanged); an archived campaign cannot change', async () => {
    const campaign = await createCampaign(org, retailer)
    expect((await patch(`${ADS}/campaigns/${campaign.id}`, { status: 'draft' }, org.key)).json.status).toBe('draft')
    for (const step of PATH_TO.archived) await patch(`${ADS}/campaigns/${campaign.id}`, { status: step }, org.key)
    expectProblem(await patch(`${ADS}/campaigns/${campaign.id}`, { name: 'Renamed' }, org.key), 409, 'conflict')
  })
})
