import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { ADMIN, createOrganization, expectProblem, RETAILERS, sql } from '../../support/fixtures'
import { patch, post } from '../../support/server'

// Issue 46: a canonical retailer is readable by every organization, so a PATCH from one that does
// not own it is 403 `forbidden` (it knows the retailer exists), not 404; nothing changes.

describe('PATCH of a canonical retailer by a non-owner', () => {
  test('is 403 forbidden and leaves the retailer unchanged', async () => {
    const [owner, reader] = await Promise.all([createOrganization(), createOrganization()])
    const shared = (await post(RETAILERS, { name: 'Canonical Mart', is_canonical: true }, owner.key, ADMIN)).json
    const row = () => sql('select * from retailers where id = $1', [parseId(shared.id)])
    const before = await row()
    const res = await patch(`${RETAILERS}/${shared.id}`, { name: 'Taken over' }, reader.key)
    expectProblem(res, 403, 'forbidden')
    expect(res.json.detail).toContain('canonical')
    expect(await row()).toEqual(before)
    // a private retailer of another organization stays 404 (its existence is not revealed)
    const mine = (await post(RETAILERS, { name: 'Private Mart' }, owner.key)).json
    expectProblem(await patch(`${RETAILERS}/${mine.id}`, { name: 'x' }, reader.key), 404, 'not_found')
    // the owner still may
    expect((await patch(`${RETAILERS}/${shared.id}`, { name: 'Canonical Mart 2' }, owner.key)).status).toBe(200)
  })
})
