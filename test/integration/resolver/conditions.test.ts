// Rule conditions at chosen instants: the index the server uses (loaded from the database), the
// evaluation and the choice it makes, with the clock given instead of read.
import { beforeAll, describe, expect, test } from 'bun:test'
import type { Place } from '../../../src/resolver/conditions'
import { choose, evaluate } from '../../../src/resolver/resolve'
import { ruleIndex } from '../../../src/resolver/rule-index'
import { createOrganization, type TestOrg } from '../../support/fixtures'
import { createRule, ownedProduct } from './support'

let org: TestOrg
const NOWHERE: Place = { country: null, region: null, city: null }

/** A product with exactly these rules; resolves it at `iso` from `place`: the target, or null. */
async function productWith(rules: Record<string, unknown>[]) {
  const product = await ownedProduct(org)
  for (const [i, rule] of rules.entries())
    await createRule(org, {
      scope_type: 'PRODUCT',
      product_id: product.id,
      custom_url: `https://rule${i}.example/`,
      ...rule,
    })
  return async (iso: string, place: Place = NOWHERE, linkType?: string) => {
    await ruleIndex.ready()
    const ref = (await ruleIndex.product(product.gtin))!
    const outcome = choose(evaluate(ruleIndex.rulesFor(ref), Date.parse(iso), place), linkType)
    return outcome.kind === 'redirect' ? outcome.rule.href : outcome.kind
  }
}

beforeAll(async () => {
  org = await createOrganization()
})

describe('conditions, each alone', () => {
  test('absolute window: from start (inclusive) to end (exclusive)', async () => {
    const at = await productWith([
      { absolute_start_at: '2026-06-01T00:00:00Z', absolute_end_at: '2026-06-08T00:00:00Z', order_index: 0 },
      { order_index: 1 },
    ])
    expect(await at('2026-05-31T23:59:59Z')).toBe('https://rule1.example/')
    expect(await at('2026-06-01T00:00:00Z')).toBe('https://rule0.example/')
    expect(await at('2026-06-07T23:59:59Z')).toBe('https://rule0.example/')
    expect(await at('2026-06-08T00:00:00Z')).toBe('https://rule1.example/')
  })

  test('annual window, both ends inclusive, and one that wraps the new year', async () => {
    const summer = await productWith([{ annual_start_mmdd: '06-01', annual_end_mmdd: '06-30' }])
    expect(await summer('2026-06-01T12:00:00Z')).toBe('https://rule0.example/')
    expect(await summer('2027-06-30T12:00:00Z')).toBe('https://rule0.example/')
    expect(await summer('2026-07-01T12:00:00Z')).toBe('none')
    const holidays = await productWith([{ annual_start_mmdd: '12-20', annual_end_mmdd: '01-05' }])
    for (const day of ['2026-12-20', '2026-12-31', '2027-01-01', '2027-01-05'])
      expect(await holidays(`${day}T12:00:00Z`)).toBe('https://rule0.example/')
    for (const day of ['2026-12-19', '2027-01-06', '2027-07-04'])
      expect(await holidays(`${day}T12:00:00Z`)).toBe('none')
  })

  test("days of week in the rule's time zone (Friday evening in Los Angeles is Saturday in UTC)", async () => {
    const weekend = await productWith([{ days_of_week: [6, 7], timezone: 'America/Los_Angeles' }])
    expect(await weekend('2026-11-28T06:00:00Z')).toBe('none') // Fri 22:00 PST
    expect(await weekend('2026-11-28T09:00:00Z')).toBe('https://rule0.example/') // Sat 01:00
    expect(await weekend('2026-11-30T07:59:00Z')).toBe('https://rule0.example/') // Sun 23:59
    expect(await weekend('2026-11-30T08:00:00Z')).toBe('none') // Mon 00:00
    const utc = await productWith([{ days_of_week: [6, 7] }])
    expect(await utc('2026-11-28T06:00:00Z')).toBe('https://rule0.example/')
  })

  test('time of day: end exclusive, and a window that wraps midnight', async () => {
    const office = await productWith([{ time_of_day_start: '09:00', time_of_day_end: '17:00' }])
    expect(await office('2026-11-24T08:59:00Z')).toBe('none')
    expect(await office('2026-11-24T09:00:00Z')).toBe('https://rule0.example/')
    expect(await office('2026-11-24T16:59:00Z')).toBe('https://rule0.example/')
    expect(await office('2026-11-24T17:00:00Z')).toBe('none')
    const night = await productWith([{ time_of_day_start: '22:00', time_of_day_end: '02:00' }])
    expect(await night('2026-11-24T21:59:00Z')).toBe('none')
    expect(await night('2026-11-24T23:30:00Z')).toBe('https://rule0.example/')
    expect(await night('2026-11-25T01:59:00Z')).toBe('https://rule0.example/')
    expect(await night('2026-11-25T02:00:00Z')).toBe('none')
  })

  test('a DST change day in America/Los_Angeles: 09:00 local is 17:00 UTC before, 16:00 UTC after', async () => {
    const shop = await productWith([
      { time_of_day_start: '09:00', time_of_day_end: '17:00', timezone: 'America/Los_Angeles' },
    ])
    // Saturday 7 March 2026, PST (UTC-8): 16:30 UTC is 08:30
    expect(await shop('2026-03-07T16:30:00Z')).toBe('none')
    expect(await shop('2026-03-07T17:00:00Z')).toBe('https://rule0.example/')
    // Sunday 8 March 2026, clocks go forward at 02:00: PDT (UTC-7), 16:30 UTC is 09:30
    expect(await shop('2026-03-08T16:30:00Z')).toBe('https://rule0.example/')
    expect(await shop('2026-03-09T00:00:00Z')).toBe('none') // 17:00 PDT, end exclusive
    // and back on 1 November 2026: 16:30 UTC is 08:30 PST again
    expect(await shop('2026-11-01T16:30:00Z')).toBe('none')
  })

  test('place: country, region and city (case-insensitive), each required when the rule names it', async () => {
    const countries = await productWith([{ location_countries: ['US', 'CA'] }])
    expect(await countries('2026-11-24T12:00:00Z', { ...NOWHERE, country: 'CA' })).toBe('https://rule0.example/')
    expect(await countries('2026-11-24T12:00:00Z', { ...NOWHERE, country: 'DE' })).toBe('none')
    expect(await countries('2026-11-24T12:00:00Z')).toBe('none')
    const regions = await productWith([{ location_regions: ['US-CA'] }])
    expect(await regions('2026-11-24T12:00:00Z', { ...NOWHERE, country: 'US', region: 'US-CA' })).toBe(
      'https://rule0.example/',
    )
    expect(await regions('2026-11-24T12:00:00Z', { ...NOWHERE, country: 'US', region: 'US-NY' })).toBe('none')
    const cities = await productWith([{ location_cities: ['San Francisco'] }])
    expect(await cities('2026-11-24T12:00:00Z', { ...NOWHERE, city: 'san francisco' })).toBe('https://rule0.example/')
    expect(await cities('2026-11-24T12:00:00Z', { ...NOWHERE, city: 'Oakland' })).toBe('none')
  })

  test('link type: only rules of the requested type count', async () => {
    const at = await productWith([{ link_type: 'gs1:allergenInfo' }, { link_type: 'gs1:pip' }])
    expect(await at('2026-11-24T12:00:00Z', NOWHERE, 'gs1:pip')).toBe('https://rule1.example/')
    expect(await at('2026-11-24T12:00:00Z', NOWHERE, 'gs1:allergenInfo')).toBe('https://rule0.example/')
    expect(await at('2026-11-24T12:00:00Z', NOWHERE, 'gs1:recallStatus')).toBe('none')
  })
})

describe('conditions combined', () => {
  test('a weekend promotion in California in December, else the product page', async () => {
    const at = await productWith([
      {
        days_of_week: [6, 7],
        location_regions: ['US-CA'],
        annual_start_mmdd: '12-01',
        annual_end_mmdd: '12-31',
        timezone: 'America/Los_Angeles',
        order_index: 0,
      },
      { order_index: 1 },
    ])
    const california = { country: 'US', region: 'US-CA', city: null }
    expect(await at('2026-12-05T20:00:00Z', california)).toBe('https://rule0.example/') // Sat noon
    expect(await at('2026-12-07T20:00:00Z', california)).toBe('https://rule1.example/') // Monday
    expect(await at('2026-12-05T20:00:00Z', { ...california, region: 'US-NV' })).toBe('https://rule1.example/')
    expect(await at('2026-11-28T20:00:00Z', california)).toBe('https://rule1.example/') // November
  })

  test('every condition must hold: a rule failing one of them is skipped for the next', async () => {
    const at = await productWith([
      {
        absolute_start_at: '2026-01-01T00:00:00Z',
        absolute_end_at: '2027-01-01T00:00:00Z',
        time_of_day_start: '08:00',
        time_of_day_end: '20:00',
        location_countries: ['FR'],
        timezone: 'Europe/Paris',
        order_index: 0,
      },
      { location_countries: ['FR'], order_index: 1 },
    ])
    const france = { country: 'FR', region: null, city: null }
    expect(await at('2026-07-14T10:00:00Z', france)).toBe('https://rule0.example/')
    expect(await at('2026-07-14T19:00:00Z', france)).toBe('https://rule1.example/') // 21:00 in Paris
    expect(await at('2027-07-14T10:00:00Z', france)).toBe('https://rule1.example/')
    expect(await at('2026-07-14T10:00:00Z')).toBe('none')
  })
})

describe('the index keeps one copy of repeated values', () => {
  test('rules of one product share their place sets and language lists; each keeps its own target', async () => {
    const product = await ownedProduct(org)
    for (const i of [0, 1])
      await createRule(org, {
        scope_type: 'PRODUCT',
        product_id: product.id,
        custom_url: `https://shared${i}.example/`,
        location_countries: ['us', 'CA'],
        hreflang: ['en', 'fr'],
        order_index: i,
      })
    await ruleIndex.load()
    const ref = (await ruleIndex.product(product.gtin))!
    const [a, b] = ruleIndex.rulesFor(ref)
    expect([a!.href, b!.href]).toEqual(['https://shared0.example/', 'https://shared1.example/'])
    expect([...a!.countries!]).toEqual(['US', 'CA'])
    expect(b!.countries).toBe(a!.countries!)
    expect(b!.hreflang).toBe(a!.hreflang)
  })
})
