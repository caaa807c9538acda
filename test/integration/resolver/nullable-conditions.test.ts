import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, sql } from '../../support/fixtures'
import { patch, post } from '../../support/server'
import { rulesPath } from './support'

// Issue 46 / contract §6: every condition field is nullable, null meaning no condition. The list
// conditions (days_of_week, location_*) were 422 on null; null is stored as the empty list.

const LISTS = ['days_of_week', 'location_countries', 'location_regions', 'location_cities'] as const

const stored = (id: string) =>
  sql(
    'select days_of_week, location_countries, location_regions, location_cities from resolution_rules where id = $1',
    [parseId(id)],
  )

describe('null list conditions', () => {
  test('create accepts null for each list condition and stores no condition', async () => {
    const org = await createOrganization()
    const body = Object.fromEntries(LISTS.map((f) => [f, null]))
    const res = await post(
      rulesPath(org),
      { scope_type: 'ORGANIZATION', custom_url: 'https://h.example/', ...body },
      org.key,
    )
    expect(res.status).toBe(201)
    for (const f of LISTS) expect(res.json[f]).toEqual([])
    expect(await stored(res.json.id)).toEqual([
      { days_of_week: [], location_countries: [], location_regions: [], location_cities: [] },
    ])
  })

  test('patch with null clears a list condition; omitted lists are kept', async () => {
    const org = await createOrganization()
    const created = await post(
      rulesPath(org),
      {
        scope_type: 'ORGANIZATION',
        custom_url: 'https://h.example/',
        days_of_week: [1, 2],
        location_countries: ['fr'],
        location_cities: ['Paris'],
      },
      org.key,
    )
    expect(created.status).toBe(201)
    const res = await patch(
      `${rulesPath(org)}/${created.json.id}`,
      { days_of_week: null, location_countries: null },
      org.key,
    )
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ days_of_week: [], location_countries: [], location_cities: ['Paris'] })
    expect(await stored(created.json.id)).toEqual([
      { days_of_week: [], location_countries: [], location_regions: [], location_cities: ['Paris'] },
    ])
  })

  test('a wrong item is still 422 naming the field', async () => {
    const org = await createOrganization()
    const res = await post(
      rulesPath(org),
      { scope_type: 'ORGANIZATION', custom_url: 'https://h.example/', days_of_week: [9] },
      org.key,
    )
    expect(res.status).toBe(422)
    expect(res.json.errors[0].field).toMatch(/^days_of_week/)
  })
})
