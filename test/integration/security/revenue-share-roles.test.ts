import { beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createOrganization,
  eventually,
  expectProblem,
  RETAILERS,
  sql,
  type TestOrg,
  unique,
} from '../../support/fixtures'
import { startServer } from '../../support/process'
import { call, databaseUrl, get, patch, post } from '../../support/server'
import { createCampaign, rowsPath, sharesPath } from '../advertising/support'

// Issue 44, finding 6 (revenue shares): only the admin token (the platform, which pays) moves a
// share to APPROVED or PAID (contract §4); a retailer organization's manager may dispute it and
// add metadata; the platform organization's keys read every share and change none of others'.

let shop: TestOrg
let shareId = ''

/** The stored share, every column a move would touch. */
const stored = async () =>
  (
    await sql('select status, paid_at, payment_transfer_id, metadata, modified from revenue_shares where id = $1', [
      shareId,
    ])
  )[0]

const asAdmin = (path: string, body: unknown) => call('PATCH', path, { body, headers: ADMIN })

beforeAll(async () => {
  const advertiser = await createOrganization()
  shop = await createOrganization()
  const retailer = (await post(RETAILERS, { name: unique('Shop'), is_canonical: true }, shop.key, ADMIN)).json.id
  const campaign = (await createCampaign(advertiser, retailer)).id
  expect(
    (
      await post(
        rowsPath(campaign),
        [{ date: '2094-02-03', impressions: 10, clicks: 2, spend: '40.00' }],
        advertiser.key,
      )
    ).status,
  ).toBe(200)
  const res = await post('/advertising/api/v1/revenue-share/calculate', { period: '2094-02' }, undefined, ADMIN)
  expect(res.status).toBe(202)
  const [row] = await eventually(async () => {
    const rows = await sql<{ id: string }>(
      `select id from revenue_shares where retailer_id = $1 and period_start = '2094-02-01'`,
      [parseId(retailer)],
    )
    return rows.length ? rows : null
  })
  shareId = row!.id
})

describe("a retailer organization's manager and its own revenue share", () => {
  test('approving or paying it is 403 and changes nothing; the admin token approves and pays', async () => {
    const path = `${sharesPath(shop.id)}/${shareId}`
    expect((await get(path, shop.key)).json.organization_id).toBe(shop.id)
    const before = await stored()
    expect(before!.status).toBe('CALCULATED')
    const approve = await patch(path, { status: 'APPROVED' }, shop.key)
    expectProblem(approve, 403, 'forbidden')
    expect(approve.json.detail).toContain('X-Admin-Token')
    expect(await stored()).toEqual(before)

    expect((await asAdmin(path, { status: 'APPROVED' })).status).toBe(200)
    const approved = await stored()
    expect(approved!.status).toBe('APPROVED')
    // the finding: PAID with a self-asserted transfer id
    expectProblem(
      await patch(path, { status: 'PAID', payment_transfer_id: 'tr_self_asserted' }, shop.key),
      403,
      'forbidden',
    )
    expect(await stored()).toEqual(approved)

    const paid = await asAdmin(path, { status: 'PAID', payment_transfer_id: 'tr_platform_1' })
    expect(paid.status).toBe(200)
    expect(paid.json).toMatchObject({ status: 'PAID', payment_transfer_id: 'tr_platform_1' })
  })

  test('it may add metadata and dispute the share', async () => {
    const path = `${sharesPath(shop.id)}/${shareId}`
    const noted = await patch(path, { metadata: { note: 'checked' } }, shop.key)
    expect(noted.status).toBe(200)
    expect(noted.json.metadata).toMatchObject({ note: 'checked' })
    const disputed = await patch(path, { status: 'DISPUTED' }, shop.key)
    expect(disputed.status).toBe(200)
    expect((await stored())!.status).toBe('DISPUTED')
    expect((await stored())!.payment_transfer_id).toBe('tr_platform_1')
  })
})

describe('the platform organization (PLATFORM_ORGANIZATION_ID)', () => {
  test("its keys read every retailer's shares and change none of them", async () => {
    const platform = await createOrganization()
    const other = await createOrganization()
    const retailer = (await post(RETAILERS, { name: unique('Other') }, other.key)).json.id
    const [row] = await sql<{ id: string }>(
      `insert into revenue_shares (organization_id, retailer_id, period_start, period_end, gross_revenue, platform_fee,
         retailer_share, platform_fee_rate)
       values ($1, $2, '2094-03-01', '2094-03-31', 100, 20, 80, 0.2) returning id`,
      [parseId(other.id), parseId(retailer)],
    )
    const server = await startServer({
      DATABASE_URL: databaseUrl,
      ROLE: 'api',
      LOG_LEVEL: 'warn',
      PLATFORM_ORGANIZATION_ID: platform.id,
    })
    try {
      const at = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
        const res = await fetch(server.url + path, {
          method,
          headers: { 'x-api-key': platform.key, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        return { status: res.status, json: (await res.json()) as any }
      }
      const path = `${sharesPath(platform.id)}/${row!.id}`
      expect((await at('GET', path)).json.organization_id).toBe(other.id)
      const before = (await sql('select status, metadata, modified from revenue_shares where id = $1', [row!.id]))[0]
      for (const body of [{ status: 'APPROVED' }, { status: 'DISPUTED' }, { metadata: { note: 'platform key' } }]) {
        const res = await at('PATCH', path, body)
        expect(res.status).toBe(403)
        expect(res.json.code).toBe('forbidden')
      }
      expect((await sql('select status, metadata, modified from revenue_shares where id = $1', [row!.id]))[0]).toEqual(
        before,
      )
      // the admin token acts for the platform
      const approved = await fetch(server.url + path, {
        method: 'PATCH',
        headers: { ...ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'APPROVED' }),
      })
      expect(approved.status).toBe(200)
    } finally {
      server.kill('SIGKILL')
      await server.exited
    }
  }, 60_000)
})
