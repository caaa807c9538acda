import { beforeAll, describe, expect, test } from 'bun:test'
import { sql as raw } from 'drizzle-orm'
import { calculateRevenueShares, periodBounds, previousPeriod } from '../../../src/advertising/revenue-shares'
import { transaction } from '../../../src/db/tx'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createKey,
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
import { ADS, createCampaign, rowsPath, sharesPath } from './support'

const SPEC_DECIMAL = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/
const CALCULATE = `${ADS}/revenue-share/calculate`

let advertiser: TestOrg
let shopB: TestOrg
let shopC: TestOrg
let retailerB: string
let retailerC: string
const campaigns = { b1: '', b2: '', c1: '' }

/** A retailer of the canonical directory (any organization may advertise on it), owned by `org`. */
async function canonicalRetailer(org: TestOrg) {
  const res = await post(RETAILERS, { name: unique('Shop'), is_canonical: true }, org.key, ADMIN)
  expect(res.status).toBe(201)
  return res.json.id as string
}

const report = async (campaign: string, date: string, spend: string, source?: string) => {
  const res = await post(rowsPath(campaign), [{ date, impressions: 100, clicks: 1, spend, source }], advertiser.key)
  expect(res.status).toBe(200)
}

/** Asks for a month's calculation (admin token) and waits for its job to finish. */
async function calculate(period: string, rate = '0.15') {
  const res = await post(CALCULATE, { period, platform_fee_rate: rate }, undefined, ADMIN)
  expect(res.status).toBe(202)
  await eventually(async () => {
    const [job] = await sql<{ state: string }>('select state from pgboss.job where id = $1', [res.json.job_id])
    return job?.state === 'completed' ? true : null
  })
  return res.json
}

const shareOf = async (retailer: string, periodStart: string) => {
  const [row] = await sql<{ id: string; organization_id: string }>(
    'select id, organization_id from revenue_shares where retailer_id = $1 and period_start = $2',
    [parseId(retailer), periodStart],
  )
  return row
}

const eventCount = async (shareId: string) =>
  (
    await sql<{ n: number }>(
      `select count(*)::int n from events where event_type = 'revenue_share.calculated' and subject_id = $1`,
      [shareId],
    )
  )[0]!.n

beforeAll(async () => {
  ;[advertiser, shopB, shopC] = await Promise.all([createOrganization(), createOrganization(), createOrganization()])
  retailerB = await canonicalRetailer(shopB)
  retailerC = await canonicalRetailer(shopC)
  campaigns.b1 = (await createCampaign(advertiser, retailerB)).id
  campaigns.b2 = (await createCampaign(advertiser, retailerB)).id
  campaigns.c1 = (await createCampaign(advertiser, retailerC)).id
  // January 2031 on B: 10.005 + 0.1 = 10.105; the first of February belongs to February
  await report(campaigns.b1, '2031-01-01', '10.005')
  await report(campaigns.b2, '2031-01-31', '0.1')
  await report(campaigns.b1, '2031-02-01', '5.00')
  // January 2031 on C: 10.30
  await report(campaigns.c1, '2031-01-10', '10.30')
})

describe('revenue shares: calculation (spec #7)', () => {
  test('per retailer and UTC month: gross rounded half-even to cents, fee half-even, share = gross − fee', async () => {
    const accepted = await calculate('2031-01')
    expect(accepted).toMatchObject({
      period: '2031-01',
      period_start: '2031-01-01',
      period_end: '2031-01-31',
      platform_fee_rate: '0.15',
    })
    const b = await shareOf(retailerB, '2031-01-01')
    const res = await get(`${sharesPath(shopB.id)}/${b!.id}`, shopB.key)
    expect(res.status).toBe(200)
    // 10.105 → 10.10 (half-even); 10.10 × 0.15 = 1.515 → 1.52; 10.10 − 1.52 = 8.58
    expect(res.json).toMatchObject({
      organization_id: shopB.id,
      retailer_id: retailerB,
      period_start: '2031-01-01',
      period_end: '2031-01-31',
      gross_revenue: '10.10',
      platform_fee: '1.52',
      retailer_share: '8.58',
      platform_fee_rate: '0.15',
      status: 'CALCULATED',
      metadata: {},
      paid_at: null,
      payment_transfer_id: '',
    })
    for (const field of ['gross_revenue', 'platform_fee', 'retailer_share', 'platform_fee_rate'])
      expect(res.json[field]).toMatch(SPEC_DECIMAL)
    const c = await shareOf(retailerC, '2031-01-01')
    // 10.30 × 0.15 = 1.545 → 1.54 (half-even); 10.30 − 1.54 = 8.76
    expect((await get(`${sharesPath(shopC.id)}/${c!.id}`, shopC.key)).json).toMatchObject({
      gross_revenue: '10.30',
      platform_fee: '1.54',
      retailer_share: '8.76',
    })
    expect(await eventCount(b!.id)).toBe(1)
    const [event] = await sql<{ organization_id: string }>(
      `select organization_id from events where event_type = 'revenue_share.calculated' and subject_id = $1`,
      [b!.id],
    )
    expect(event!.organization_id).toBe(parseId(shopB.id)!)
  })

  test('February holds only February: the 31st of January is not in it', async () => {
    await calculate('2031-02')
    const b = await shareOf(retailerB, '2031-02-01')
    expect((await get(`${sharesPath(shopB.id)}/${b!.id}`, shopB.key)).json).toMatchObject({
      period_start: '2031-02-01',
      period_end: '2031-02-28',
      gross_revenue: '5.00',
      platform_fee: '0.75',
      retailer_share: '4.25',
    })
    expect(await shareOf(retailerC, '2031-02-01')).toBeUndefined()
  })

  test('running a month again duplicates nothing; late rows update a CALCULATED share, not an APPROVED one', async () => {
    const before = await sql('select id, gross_revenue::text from revenue_shares where period_start = $1 order by id', [
      '2031-01-01',
    ])
    await calculate('2031-01')
    expect(
      await sql('select id, gross_revenue::text from revenue_shares where period_start = $1 order by id', [
        '2031-01-01',
      ]),
    ).toEqual(before)
    const b = await shareOf(retailerB, '2031-01-01')
    const c = await shareOf(retailerC, '2031-01-01')
    expect(await eventCount(b!.id)).toBe(1)

    // the platform approves (contract §4: only the admin token moves a share to APPROVED or PAID)
    const approved = await call('PATCH', `${sharesPath(shopC.id)}/${c!.id}`, {
      body: { status: 'APPROVED' },
      headers: ADMIN,
    })
    expect(approved.status).toBe(200)
    await report(campaigns.b1, '2031-01-20', '1.00')
    await report(campaigns.c1, '2031-01-20', '1.00')
    await calculate('2031-01')
    // 11.105 → 11.10 (half-even); 11.10 × 0.15 = 1.665 → 1.66; 11.10 − 1.66 = 9.44
    expect((await get(`${sharesPath(shopB.id)}/${b!.id}`, shopB.key)).json).toMatchObject({
      gross_revenue: '11.10',
      platform_fee: '1.66',
      retailer_share: '9.44',
      status: 'CALCULATED',
    })
    expect(await eventCount(b!.id)).toBe(2)
    expect((await get(`${sharesPath(shopC.id)}/${c!.id}`, shopC.key)).json).toMatchObject({
      gross_revenue: '10.30',
      status: 'APPROVED',
    })
    expect(await eventCount(c!.id)).toBe(1)
    expect(
      await sql('select count(*)::int n from revenue_shares where retailer_id = $1', [parseId(retailerB)]),
    ).toEqual([{ n: 2 }])
  })

  test('periods are UTC months whatever the zone of the process or of the database session', async () => {
    const zone = process.env.TZ
    try {
      for (const tz of ['Pacific/Kiritimati', 'America/Los_Angeles', 'UTC']) {
        process.env.TZ = tz
        expect(periodBounds('2032-02')).toEqual({ start: '2032-02-01', end: '2032-02-29' })
        expect(periodBounds('2031-12')).toEqual({ start: '2031-12-01', end: '2031-12-31' })
        // 00:30 on March 1st in UTC+2 is still February in UTC: the month before is January
        expect(previousPeriod(new Date('2031-03-01T00:30:00+02:00'))).toBe('2031-01')
        // 20:00 on February 28th in UTC−5 is already March in UTC
        expect(previousPeriod(new Date('2031-02-28T20:00:00-05:00'))).toBe('2031-02')
        expect(previousPeriod(new Date('2031-01-01T00:00:00Z'))).toBe('2030-12')
      }
    } finally {
      process.env.TZ = zone
    }
    // a session at UTC+14 computes the same February (the 31st of January stays out)
    const { shares } = await transaction(async (tx) => {
      await tx.execute(raw`set local time zone 'Pacific/Kiritimati'`)
      await tx.execute(raw`delete from revenue_shares where period_start = '2031-02-01'`)
      return calculateRevenueShares(tx, '2031-02', '0.15')
    })
    expect(shares.find((s) => s.retailer_id === retailerB)).toMatchObject({
      period_start: '2031-02-01',
      period_end: '2031-02-28',
      gross_revenue: '5.00',
    })
  })

  test('calculate is the admin token only (404 otherwise); a bad period is 422', async () => {
    expectProblem(await post(CALCULATE, { period: '2031-01' }, shopB.key), 404, 'not_found')
    expectProblem(await post(CALCULATE, { period: '2031-13' }, undefined, ADMIN), 422, 'validation_error')
    expectProblem(
      await post(CALCULATE, { period: '2031-01', platform_fee_rate: '1.5' }, undefined, ADMIN),
      422,
      'validation_error',
    )
  })
})

describe('revenue shares: who sees them', () => {
  test("the retailer's organization and the admin token see a share; anyone else 404 (or 403 off its own path)", async () => {
    const b = await shareOf(retailerB, '2031-01-01')
    const path = `${sharesPath(shopB.id)}/${b!.id}`
    expect((await get(path, await createKey(shopB, 'readonly'))).status).toBe(200)
    expect((await get(path, undefined, ADMIN)).status).toBe(200)
    expectProblem(await get(`${sharesPath(shopC.id)}/${b!.id}`, shopC.key), 404, 'not_found')
    expectProblem(await get(`${sharesPath(advertiser.id)}/${b!.id}`, advertiser.key), 404, 'not_found')
    expectProblem(await get(path, advertiser.key), 403, 'forbidden')
    expectProblem(await get(path), 401, 'unauthenticated')
    const list = await get(sharesPath(shopB.id), shopB.key)
    expect(list.status).toBe(200)
    expect(list.json.data.every((s: { organization_id: string }) => s.organization_id === shopB.id)).toBe(true)
    expect(list.json.data.map((s: { period_start: string }) => s.period_start)).toEqual(['2031-02-01', '2031-01-01'])
    const filtered = await get(`${sharesPath(shopB.id)}?period_start=2031-01-01&status=CALCULATED`, shopB.key)
    expect(filtered.json.data.map((s: { id: string }) => s.id)).toEqual([(await get(path, shopB.key)).json.id])
  })

  test("the platform organization (PLATFORM_ORGANIZATION_ID) sees every retailer's shares under its own id; only the admin token moves them", async () => {
    const platform = await createOrganization()
    // an API process of its own, configured with the platform organization
    const server = await startServer({
      DATABASE_URL: databaseUrl,
      ROLE: 'api',
      LOG_LEVEL: 'warn',
      PLATFORM_ORGANIZATION_ID: platform.id,
    })
    try {
      const at = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(server.url + path, {
          method,
          headers: { 'x-api-key': platform.key, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        return { status: res.status, json: (await res.json()) as any }
      }
      const b = await shareOf(retailerB, '2031-02-01')
      const path = `${sharesPath(platform.id)}/${b!.id}`
      expect((await at('GET', path)).json.organization_id).toBe(shopB.id)
      const list = await at('GET', `${sharesPath(platform.id)}?period_start=2031-01-01`)
      expect(list.json.data.map((s: { retailer_id: string }) => s.retailer_id).sort()).toEqual(
        [retailerB, retailerC].sort(),
      )
      // its keys read; approving is the platform's admin token (contract §4), not a key's
      const refused = await at('PATCH', path, { status: 'APPROVED' })
      expect(refused.status).toBe(403)
      expect(refused.json.code).toBe('forbidden')
      expect((await at('PATCH', path, { status: 'DISPUTED' })).status).toBe(403)
      expect(
        (await sql<{ status: string }>('select status from revenue_shares where id = $1', [b!.id]))[0]!.status,
      ).toBe('CALCULATED')
      const approved = await fetch(server.url + path, {
        method: 'PATCH',
        headers: { ...ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'APPROVED' }),
      })
      expect(approved.status).toBe(200)
      expect(((await approved.json()) as { status: string }).status).toBe('APPROVED')
      // the main test server has no platform organization: there the same path is 404
      expectProblem(await get(path, platform.key), 404, 'not_found')
    } finally {
      server.kill('SIGKILL')
    }
  })
})

describe('revenue share status moves', () => {
  const MOVES: Record<string, string[]> = {
    CALCULATED: ['APPROVED', 'DISPUTED'],
    APPROVED: ['PAID', 'DISPUTED'],
    PAID: ['DISPUTED'],
    DISPUTED: [],
  }
  let month = 0
  const platformMove = (to: string) => to === 'APPROVED' || to === 'PAID'
  const asAdmin = (path: string, body: unknown) => call('PATCH', path, { body, headers: ADMIN })
  /** A share of shop B in a state of its own (a fresh month each time). */
  async function shareIn(status: string) {
    month++
    const start = `${2040 + Math.floor(month / 12)}-${String((month % 12) + 1).padStart(2, '0')}-01`
    const [row] = await sql<{ id: string }>(
      `insert into revenue_shares (organization_id, retailer_id, period_start, period_end, gross_revenue, platform_fee,
         retailer_share, platform_fee_rate, status, paid_at, payment_transfer_id)
       values ($1, $2, $3::date, ($3::date + interval '1 month - 1 day')::date, 100, 20, 80, 0.2, $4::text,
         case when $4::text = 'PAID' then now() end, case when $4::text = 'PAID' then 'tr_before' else '' end) returning id`,
      [parseId(shopB.id), parseId(retailerB), start, status],
    )
    return `${sharesPath(shopB.id)}/${row!.id}`
  }

  for (const from of Object.keys(MOVES))
    for (const to of Object.keys(MOVES)) {
      if (from === to) continue
      const allowed = MOVES[from]!.includes(to)
      test(`${from} → ${to}: ${allowed ? '200' : '409'}`, async () => {
        const path = await shareIn(from)
        const body = to === 'PAID' ? { status: to, payment_transfer_id: 'tr_123' } : { status: to }
        // APPROVED and PAID are the platform's moves (admin token); DISPUTED the retailer manager's
        const res = platformMove(to) ? await asAdmin(path, body) : await patch(path, body, shopB.key)
        const [row] = await sql<{ status: string }>('select status from revenue_shares where id = $1', [
          path.split('/').pop(),
        ])
        if (allowed) {
          expect(res.status).toBe(200)
          expect(res.json.status).toBe(to)
          expect(row!.status).toBe(to)
        } else {
          expectProblem(res, 409, 'conflict')
          expect(row!.status).toBe(from)
        }
      })
    }

  test('PAID needs the transfer id, records it with paid_at; a paid share keeps it', async () => {
    const path = await shareIn('APPROVED')
    const missing = await asAdmin(path, { status: 'PAID' })
    expectProblem(missing, 422, 'validation_error')
    expect(missing.json.errors[0].field).toBe('payment_transfer_id')
    const early = await asAdmin(path, { payment_transfer_id: 'tr_early' })
    expectProblem(early, 422, 'validation_error')
    const paid = await asAdmin(path, { status: 'PAID', payment_transfer_id: 'tr_789', metadata: { batch: 'nov' } })
    expect(paid.status).toBe(200)
    expect(paid.json).toMatchObject({ status: 'PAID', payment_transfer_id: 'tr_789', metadata: { batch: 'nov' } })
    expect(Date.now() - Date.parse(paid.json.paid_at)).toBeLessThan(60_000)
    // the same status and transfer id again is no move, for the admin token and the retailer's manager alike
    expect((await asAdmin(path, { status: 'PAID', payment_transfer_id: 'tr_789' })).json).toEqual(paid.json)
    const same = await patch(path, { status: 'PAID', payment_transfer_id: 'tr_789' }, shopB.key)
    expect(same.json).toEqual(paid.json)
    expectProblem(await patch(path, { payment_transfer_id: 'tr_other' }, shopB.key), 409, 'conflict')
    expectProblem(await asAdmin(path, { payment_transfer_id: 'tr_other' }), 409, 'conflict')
    const [row] = await sql(
      'select payment_transfer_id, paid_at is not null as paid from revenue_shares where id = $1',
      [path.split('/').pop()],
    )
    expect(row).toEqual({ payment_transfer_id: 'tr_789', paid: true })
  })

  test('moves need a manager key of the organization (or the admin token)', async () => {
    const path = await shareIn('CALCULATED')
    expectProblem(await patch(path, { status: 'APPROVED' }, await createKey(shopB, 'editor')), 403, 'forbidden')
    expectProblem(await patch(path.replace(shopB.id, shopC.id), { status: 'APPROVED' }, shopC.key), 404, 'not_found')
    const admin = await call('PATCH', path, { body: { status: 'DISPUTED' }, headers: ADMIN })
    expect(admin.status).toBe(200)
    expect(admin.json.status).toBe('DISPUTED')
  })
})
