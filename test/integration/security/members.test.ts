import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import {
  ADMIN,
  createKey,
  createOrganization,
  expectProblem,
  ORGS,
  sql,
  type TestOrg,
  tableCounts,
} from '../../support/fixtures'
import { del, get, patch, post } from '../../support/server'

// Issue 44, finding 6 (members), contract §4: no key demotes, removes or changes the
// organization's owner member, or makes anyone owner; ownership passes only at the owner's own
// request, which the platform carries out with the admin token.

const membersOf = (org: TestOrg) => `${ORGS}/${org.id}/members`
const ownershipOf = (org: TestOrg) => `${ORGS}/${org.id}/ownership`

const ownerOf = async (org: TestOrg) => (await get(`${membersOf(org)}?role=owner`, org.key)).json.data[0]
/** The stored rows of an organization's members, to compare before and after. */
const storedMembers = (org: TestOrg) =>
  sql(
    `select id, user_email, user_name, user_metadata, role::text, created from members
      where organization_id = $1 order by created, id`,
    [parseId(org.id)],
  )

describe('the owner member (contract §4)', () => {
  test('a manager key cannot demote, change or remove the owner: 403, stored member unchanged', async () => {
    const org = await createOrganization()
    const second = await createKey(org, 'manager')
    const owner = await ownerOf(org)
    const before = await storedMembers(org)
    const counts = await tableCounts()
    for (const key of [org.key, second]) {
      for (const role of ['manager', 'editor', 'billing', 'viewer'])
        expectProblem(await patch(`${membersOf(org)}/${owner.id}`, { role }, key), 403, 'forbidden')
      expectProblem(await patch(`${membersOf(org)}/${owner.id}`, { user_name: 'Mallory' }, key), 403, 'forbidden')
      expectProblem(
        await patch(`${membersOf(org)}/${owner.id}`, { user_metadata: { phone: 'attacker' } }, key),
        403,
        'forbidden',
      )
      expectProblem(await patch(`${membersOf(org)}/${owner.id}`, { role: 'owner' }, key), 403, 'forbidden')
      expectProblem(await del(`${membersOf(org)}/${owner.id}`, key), 403, 'forbidden')
    }
    expect(await storedMembers(org)).toEqual(before)
    expect(await tableCounts()).toEqual(counts)
    expect(await ownerOf(org)).toEqual(owner)
  })

  test('no key adds an owner or promotes a member to owner; every owner of an organization is protected', async () => {
    const org = await createOrganization()
    const member = await post(membersOf(org), { user_email: 'mia@example.test', role: 'manager' }, org.key)
    expect(member.status).toBe(201)
    // an organization that has two owners from before this rule: neither can be touched by a key
    const [legacy] = await sql<{ id: string }>(
      `insert into members (organization_id, user_email, role) values ($1, 'co-owner@example.test', 'owner') returning id`,
      [parseId(org.id)],
    )
    const coOwner = (await get(`${membersOf(org)}?role=owner`, org.key)).json.data.find(
      (m: { user_email: string }) => m.user_email === 'co-owner@example.test',
    )
    expect(parseId(coOwner.id)).toBe(legacy!.id)
    const before = await storedMembers(org)
    const counts = await tableCounts()
    expectProblem(
      await post(membersOf(org), { user_email: 'eve@example.test', role: 'owner' }, org.key),
      403,
      'forbidden',
    )
    expectProblem(await patch(`${membersOf(org)}/${member.json.id}`, { role: 'owner' }, org.key), 403, 'forbidden')
    expectProblem(await patch(`${membersOf(org)}/${coOwner.id}`, { role: 'viewer' }, org.key), 403, 'forbidden')
    expectProblem(await del(`${membersOf(org)}/${coOwner.id}`, org.key), 403, 'forbidden')
    expect(await storedMembers(org)).toEqual(before)
    expect(await tableCounts()).toEqual(counts)
    // what a key may still do to other members
    expect((await patch(`${membersOf(org)}/${member.json.id}`, { role: 'editor' }, org.key)).json.role).toBe('editor')
  })

  test("ownership passes at the owner's request through the platform (admin token), never with a key", async () => {
    const org = await createOrganization()
    const owner = await ownerOf(org)
    const heir = (await post(membersOf(org), { user_email: 'heir@example.test', role: 'viewer' }, org.key)).json
    const transfer = { from_member_id: owner.id, to_member_id: heir.id }
    const before = await storedMembers(org)
    // with a key, or without the token: the route does not exist for it
    expectProblem(await post(ownershipOf(org), transfer, org.key), 404, 'not_found')
    expectProblem(await post(ownershipOf(org), transfer), 404, 'not_found')
    // a request from a member who is not the owner
    expectProblem(
      await post(ownershipOf(org), { from_member_id: heir.id, to_member_id: owner.id }, undefined, ADMIN),
      409,
      'conflict',
    )
    expect(await storedMembers(org)).toEqual(before)

    const done = await post(ownershipOf(org), { ...transfer, previous_owner_role: 'editor' }, undefined, ADMIN)
    expect(done.status).toBe(200)
    expect(done.json.owner).toMatchObject({ id: heir.id, role: 'owner', role_display: 'Owner' })
    expect(done.json.previous_owner).toMatchObject({ id: owner.id, role: 'editor' })
    const owners = (await get(`${membersOf(org)}?role=owner`, org.key)).json.data
    expect(owners.map((m: { id: string }) => m.id)).toEqual([heir.id])
    // the new owner is as protected; the previous one is an ordinary member now
    expectProblem(await del(`${membersOf(org)}/${heir.id}`, org.key), 403, 'forbidden')
    expect((await del(`${membersOf(org)}/${owner.id}`, org.key)).status).toBe(204)
  })

  test('two transfers from one owner at once: one hands ownership on, the other is 409; one owner after', async () => {
    const org = await createOrganization()
    const owner = await ownerOf(org)
    const heirs = await Promise.all(
      ['a', 'b'].map(
        async (n) => (await post(membersOf(org), { user_email: `${n}@heirs.test`, role: 'viewer' }, org.key)).json,
      ),
    )
    const results = await Promise.all(
      heirs.map((heir) =>
        post(ownershipOf(org), { from_member_id: owner.id, to_member_id: heir.id }, undefined, ADMIN),
      ),
    )
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    const owners = (await get(`${membersOf(org)}?role=owner`, org.key)).json.data
    expect(owners).toHaveLength(1)
    expect(owners[0].id).toBe(results.find((r) => r.status === 200)!.json.owner.id)
  })
})
