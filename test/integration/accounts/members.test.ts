import { describe, expect, test } from 'bun:test'
import { removeMember, transferOwnership } from '../../../src/accounts/members'
import { db } from '../../../src/db/client'
import { transaction } from '../../../src/db/tx'
import type { AppError } from '../../../src/shared/errors'
import { parseId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
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

const membersOf = (org: TestOrg | string) => `${ORGS}/${typeof org === 'string' ? org : org.id}/members`
const MEMBER_FIELDS = ['created', 'id', 'role', 'role_display', 'user_email', 'user_metadata', 'user_name']

async function orgWithMembers() {
  const org = await createOrganization()
  const people = [
    { user_email: 'bob.builder@example.test', user_name: 'Bob Builder', role: 'manager' },
    { user_email: 'carol@Example.test', user_name: 'Carol Danvers', role: 'editor' },
    { user_email: 'dave@example.test', user_name: 'Dave', role: 'billing' },
    { user_email: 'erin@example.test', user_name: 'Erin O%Brien', role: 'viewer' },
    { user_email: 'frank_x@example.test', user_name: 'Frank', role: 'viewer' },
  ]
  for (const p of people) expect((await post(membersOf(org), p, org.key)).status).toBe(201)
  return org
}

describe('members (spec #4)', () => {
  test('list: envelope and every field of each member, oldest first', async () => {
    const org = await orgWithMembers()
    const res = await get(membersOf(org), org.key)
    expect(res.status).toBe(200)
    expect(res.json.pagination).toEqual({
      page: 1,
      page_size: 25,
      total_count: 6,
      total_pages: 1,
      has_next: false,
      has_previous: false,
    })
    for (const m of res.json.data) expect(Object.keys(m).sort()).toEqual(MEMBER_FIELDS)
    expect(res.json.data.map((m: { role_display: string }) => m.role_display)).toEqual([
      'Owner',
      'Manager',
      'Editor',
      'Billing',
      'Viewer',
      'Viewer',
    ])
    expect(res.json.data[1]).toMatchObject({
      user_email: 'bob.builder@example.test',
      user_name: 'Bob Builder',
      user_metadata: {},
      role: 'manager',
    })
  })

  test.each(['owner', 'manager', 'editor', 'billing', 'viewer'])('role filter %s', async (role) => {
    const org = await orgWithMembers()
    const res = await get(`${membersOf(org)}?role=${role}`, org.key)
    expect(res.json.data.length).toBe(role === 'viewer' ? 2 : 1)
    expect(res.json.data.every((m: { role: string }) => m.role === role)).toBe(true)
  })

  test('q is a case-insensitive substring of name or email; LIKE wildcards are literal', async () => {
    const org = await orgWithMembers()
    const names = async (q: string) =>
      (await get(`${membersOf(org)}?q=${encodeURIComponent(q)}`, org.key)).json.data.map(
        (m: { user_name: string }) => m.user_name,
      )
    expect(await names('BUILD')).toEqual(['Bob Builder'])
    expect(await names('example.TEST')).toHaveLength(6) // the owner too
    expect(await names('carol@example')).toEqual(['Carol Danvers'])
    expect(await names('%')).toEqual(['Erin O%Brien'])
    expect(await names('_x')).toEqual(['Frank'])
    expect(await names('nobody')).toEqual([])
  })

  test('pagination edges: last partial page, page past the end, bounds', async () => {
    const org = await orgWithMembers()
    const p2 = await get(`${membersOf(org)}?page=2&page_size=4`, org.key)
    expect(p2.json.data).toHaveLength(2)
    expect(p2.json.pagination).toEqual({
      page: 2,
      page_size: 4,
      total_count: 6,
      total_pages: 2,
      has_next: false,
      has_previous: true,
    })
    const p1 = await get(`${membersOf(org)}?page=1&page_size=4`, org.key)
    expect(p1.json.pagination).toMatchObject({ has_next: true, has_previous: false, total_pages: 2 })
    const past = await get(`${membersOf(org)}?page=9&page_size=4`, org.key)
    expect(past.status).toBe(200)
    expect(past.json).toEqual({
      data: [],
      pagination: { page: 9, page_size: 4, total_count: 6, total_pages: 2, has_next: false, has_previous: true },
    })
    const empty = await get(`${membersOf(org)}?q=nobody`, org.key)
    expect(empty.json.pagination).toEqual({
      page: 1,
      page_size: 25,
      total_count: 0,
      total_pages: 0,
      has_next: false,
      has_previous: false,
    })
    expect((await get(`${membersOf(org)}?page_size=100`, org.key)).status).toBe(200)
    expect((await get(`${membersOf(org)}?page_size=1`, org.key)).json.data).toHaveLength(1)
    for (const bad of [
      'page=0',
      'page=-1',
      'page=abc',
      'page=1.5',
      'page_size=0',
      'page_size=101',
      'role=admin',
      'q=',
    ]) {
      const res = await get(`${membersOf(org)}?${bad}`, org.key)
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe(bad.split('=')[0])
    }
  })

  test('add: 201 with the member; duplicate email (any case) is 409 conflict', async () => {
    const org = await createOrganization()
    const res = await post(
      membersOf(org),
      { user_email: 'Zed@Example.test', user_name: 'Zed', role: 'editor', user_metadata: { team: 'a' } },
      org.key,
    )
    expect(res.status).toBe(201)
    expect(Object.keys(res.json).sort()).toEqual(MEMBER_FIELDS)
    expect(res.json).toMatchObject({
      user_email: 'Zed@Example.test',
      user_name: 'Zed',
      role: 'editor',
      role_display: 'Editor',
      user_metadata: { team: 'a' },
    })
    const before = await tableCounts()
    expectProblem(
      await post(membersOf(org), { user_email: 'zed@example.TEST', role: 'viewer' }, org.key),
      409,
      'conflict',
    )
    expect(await tableCounts()).toEqual(before)
  })

  test.each([
    ['no email', { role: 'viewer' }, 'user_email'],
    ['bad email', { user_email: 'x', role: 'viewer' }, 'user_email'],
    ['no role', { user_email: 'a@b.test' }, 'role'],
    ['bad role', { user_email: 'a@b.test', role: 'god' }, 'role'],
    ['name 256', { user_email: 'a@b.test', role: 'viewer', user_name: 'n'.repeat(256) }, 'user_name'],
  ])('add rejects %s (422) and writes nothing', async (_, body, field) => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await post(membersOf(org), body, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe(field)
    expect(await tableCounts()).toEqual(before)
  })

  test('bounds on both sides: email 320, name 255, q 255', async () => {
    const org = await createOrganization()
    const email = (n: number) => `${'a'.repeat(n - '@example.test'.length)}@example.test`
    expect(email(320)).toHaveLength(320)
    expect(
      (await post(membersOf(org), { user_email: email(320), user_name: 'n'.repeat(255), role: 'viewer' }, org.key))
        .status,
    ).toBe(201)
    expectProblem(
      await post(membersOf(org), { user_email: email(321), role: 'viewer' }, org.key),
      422,
      'validation_error',
    )
    expect((await get(`${membersOf(org)}?q=${'a'.repeat(255)}`, org.key)).status).toBe(200)
    const long = await get(`${membersOf(org)}?q=${'a'.repeat(256)}`, org.key)
    expectProblem(long, 422, 'validation_error')
    expect(long.json.errors[0].field).toBe('q')
  })

  test('change role and metadata with merge semantics; the owner stays', async () => {
    const org = await createOrganization()
    const added = await post(
      membersOf(org),
      { user_email: 'm@example.test', role: 'viewer', user_metadata: { a: '1', b: '2' } },
      org.key,
    )
    const id = added.json.id
    const changed = await patch(
      `${membersOf(org)}/${id}`,
      { role: 'manager', user_metadata: { b: '', c: '3' } },
      org.key,
    )
    expect(changed.status).toBe(200)
    expect(changed.json).toMatchObject({
      role: 'manager',
      role_display: 'Manager',
      user_metadata: { a: '1', c: '3' },
      user_name: '',
    })
    const renamed = await patch(`${membersOf(org)}/${id}`, { user_name: 'Mia' }, org.key)
    expect(renamed.json).toMatchObject({ role: 'manager', user_name: 'Mia', user_metadata: { a: '1', c: '3' } })
    const cleared = await patch(`${membersOf(org)}/${id}`, { user_metadata: null }, org.key)
    expect(cleared.json.user_metadata).toEqual({})

    const owner = (await get(`${membersOf(org)}?role=owner`, org.key)).json.data[0]
    // contract §4: no key demotes or removes the owner (test/integration/security/members.test.ts has the rest)
    expectProblem(await patch(`${membersOf(org)}/${owner.id}`, { role: 'viewer' }, org.key), 403, 'forbidden')
    expectProblem(await del(`${membersOf(org)}/${owner.id}`, org.key), 403, 'forbidden')
    // once ownership has passed (the owner's request, carried out with the admin token), the first is a member like any other
    const moved = await post(
      `${ORGS}/${org.id}/ownership`,
      { from_member_id: owner.id, to_member_id: id },
      undefined,
      ADMIN,
    )
    expect(moved.status).toBe(200)
    expect((await patch(`${membersOf(org)}/${owner.id}`, { role: 'viewer' }, org.key)).json.role).toBe('viewer')
  })

  test("a key's change of a member waits for a transfer of ownership to it, then is refused", async () => {
    const org = await createOrganization()
    const orgId = parseId(org.id)!
    const second = await post(membersOf(org), { user_email: 'heir@example.test', role: 'manager' }, org.key)
    const first = (await get(`${membersOf(org)}?role=owner`, org.key)).json.data[0]
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let demoted = () => {}
    const firstDemoted = new Promise<void>((resolve) => {
      demoted = resolve
    })
    // A hands ownership from the first to the second and keeps its transaction open; B then removes the second.
    const a = transaction(async (tx) => {
      await transferOwnership(tx, orgId, { from_member_id: parseId(first.id)!, to_member_id: parseId(second.json.id)! })
      demoted()
      await held
    })
    await firstDemoted
    let bFinished = false
    const b = removeMember(db, orgId, parseId(second.json.id)!).then(
      () => 'removed',
      (err: AppError) => err.code,
    )
    void b.then(() => {
      bFinished = true
    })
    // B waits on the organization's owner lock while A is open: PostgreSQL shows a session waiting
    // for that advisory lock (pg_advisory_xact_lock(hashtext('owners:<id>')), a bigint key shown
    // as its high and low 32 bits); a B that took no lock finishes instead, and the wait ends there
    const ownerLock = `owners:${orgId}`
    let waited = false
    try {
      await eventually(
        async () =>
          bFinished ||
          (
            await sql(
              `select 1 from pg_locks, (select hashtext($1)::bigint k) lock
                where locktype = 'advisory' and not granted and objsubid = 1
                  and classid::int8 = (k >> 32) & 4294967295 and objid::int8 = k & 4294967295`,
              [ownerLock],
            )
          ).length > 0,
        20_000,
        "B to wait on the organization's owner lock",
      )
      waited = !bFinished
    } finally {
      release() // A commits even when the wait failed, so the test ends
    }
    await a
    expect(waited).toBe(true)
    expect(await b).toBe('forbidden') // it is the owner by then
    const owners = (await get(`${membersOf(org)}?role=owner`, org.key)).json.data
    expect(owners.map((m: { id: string }) => m.id)).toEqual([second.json.id])
  })

  test('remove: 204 then 404', async () => {
    const org = await createOrganization()
    const added = await post(membersOf(org), { user_email: 'gone@example.test', role: 'viewer' }, org.key)
    const res = await del(`${membersOf(org)}/${added.json.id}`, org.key)
    expect(res.status).toBe(204)
    expect((await get(membersOf(org), org.key)).json.pagination.total_count).toBe(1)
    expectProblem(await del(`${membersOf(org)}/${added.json.id}`, org.key), 404, 'not_found')
    expectProblem(await patch(`${membersOf(org)}/${added.json.id}`, { role: 'viewer' }, org.key), 404, 'not_found')
  })

  test('readonly and editor keys read but cannot change members', async () => {
    const org = await createOrganization()
    const added = await post(membersOf(org), { user_email: 'r@example.test', role: 'viewer' }, org.key)
    for (const role of ['readonly', 'editor'] as const) {
      const key = await createKey(org, role)
      expect((await get(membersOf(org), key)).status).toBe(200)
      const before = await tableCounts()
      expectProblem(await post(membersOf(org), { user_email: 'x@example.test', role: 'viewer' }, key), 403, 'forbidden')
      expectProblem(await patch(`${membersOf(org)}/${added.json.id}`, { role: 'owner' }, key), 403, 'forbidden')
      expectProblem(await del(`${membersOf(org)}/${added.json.id}`, key), 403, 'forbidden')
      expect(await tableCounts()).toEqual(before)
    }
  })

  test("organization A's key: 403 on B's member paths, 404 for B's member under A's path", async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const bMember = (await get(membersOf(b), b.key)).json.data[0].id
    const before = await tableCounts()
    expectProblem(await get(membersOf(b), a.key), 403, 'forbidden')
    expectProblem(await post(membersOf(b), { user_email: 'x@example.test', role: 'viewer' }, a.key), 403, 'forbidden')
    expectProblem(await patch(`${membersOf(b)}/${bMember}`, { role: 'viewer' }, a.key), 403, 'forbidden')
    expectProblem(await del(`${membersOf(b)}/${bMember}`, a.key), 403, 'forbidden')
    expectProblem(await patch(`${membersOf(a)}/${bMember}`, { user_name: 'x' }, a.key), 404, 'not_found')
    expectProblem(await del(`${membersOf(a)}/${bMember}`, a.key), 404, 'not_found')
    expect(await tableCounts()).toEqual(before)
  })
})
