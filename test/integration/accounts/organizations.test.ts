import { describe, expect, test } from 'bun:test'
import { ADMIN, expectProblem, ORGS, sql, tableCounts, unique } from '../../support/fixtures'
import { get, post } from '../../support/server'

const SHORT = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/

describe('POST /account/api/v1/organizations (operator)', () => {
  test('creates the organization, its owner member and a manager key', async () => {
    const email = `${unique('ann')}@acme.test`
    // a prefix belongs to one organization (issue 44): a fresh one, so that a database reused by
    // another run (DATABASE_URL) takes it again
    const prefix = `06${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`
    const res = await post(
      ORGS,
      {
        name: 'Acme Foods',
        owner_email: email,
        owner_name: 'Ann',
        gs1_company_prefixes: [prefix],
        metadata: { tier: 'gold' },
      },
      undefined,
      ADMIN,
    )
    expect(res.status).toBe(201)
    const { organization, api_key } = res.json
    expect(Object.keys(organization).sort()).toEqual(['created', 'gs1_company_prefixes', 'id', 'metadata', 'name'])
    expect(organization).toMatchObject({
      name: 'Acme Foods',
      gs1_company_prefixes: [prefix],
      metadata: { tier: 'gold' },
    })
    expect(organization.id).toMatch(SHORT)
    expect(new Date(organization.created).toISOString()).toBe(organization.created)
    expect(api_key.role).toBe('manager')
    expect(api_key.key).toMatch(/^gck_live_[A-Za-z0-9_-]{43}$/)
    const members = await get(`${ORGS}/${organization.id}/members`, api_key.key)
    expect(members.json.data).toEqual([
      expect.objectContaining({ user_email: email, user_name: 'Ann', role: 'owner', role_display: 'Owner' }),
    ])
  })

  test('without the admin token the route does not exist (404), and nothing is written', async () => {
    const before = await tableCounts()
    const body = { name: 'X', owner_email: 'x@example.test' }
    expectProblem(await post(ORGS, body), 404, 'not_found')
    expectProblem(await post(ORGS, body, undefined, { 'x-admin-token': 'wrong-token-wrong-token' }), 404, 'not_found')
    expectProblem(await post(ORGS, { bogus: true }), 404, 'not_found')
    expect(await tableCounts()).toEqual(before)
  })

  test.each([
    ['empty name', { name: '', owner_email: 'a@b.test' }, 'name'],
    ['name of 256', { name: 'n'.repeat(256), owner_email: 'a@b.test' }, 'name'],
    ['bad email', { name: 'N', owner_email: 'not-an-email' }, 'owner_email'],
    ['bad prefix', { name: 'N', owner_email: 'a@b.test', gs1_company_prefixes: ['12a'] }, 'gs1_company_prefixes.0'],
  ])('rejects %s with 422 and writes nothing', async (_, body, field) => {
    const before = await tableCounts()
    const res = await post(ORGS, body, undefined, ADMIN)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors.map((e: { field: string }) => e.field)).toContain(field)
    expect(await tableCounts()).toEqual(before)
  })

  test('name of exactly 255 characters is accepted', async () => {
    const res = await post(ORGS, { name: 'n'.repeat(255), owner_email: `${unique('b')}@b.test` }, undefined, ADMIN)
    expect(res.status).toBe(201)
    const [row] = await sql<{ n: number }>(
      'select count(*)::int n from members where organization_id = (select id from organizations where name = $1 limit 1)',
      ['n'.repeat(255)],
    )
    expect(row!.n).toBeGreaterThanOrEqual(1)
  })
})
