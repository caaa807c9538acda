import { describe, expect, test } from 'bun:test'
import { parseId } from '../../../src/shared/ids'
import { createKey, createOrganization, expectProblem, ORGS, sql, tableCounts } from '../../support/fixtures'
import { call, del, get, post } from '../../support/server'

const keysOf = (orgId: string) => `${ORGS}/${orgId}/api-keys`

describe('API keys', () => {
  test('create (spec #1): 200, every field, raw key once, readonly by default, stored only as a hash', async () => {
    const org = await createOrganization()
    const res = await post(keysOf(org.id), { name: 'Reporting' }, org.key)
    expect(res.status).toBe(200)
    expect(Object.keys(res.json).sort()).toEqual(['created', 'description', 'id', 'key', 'metadata', 'name', 'role'])
    expect(res.json).toMatchObject({ name: 'Reporting', role: 'readonly', description: '', metadata: {} })
    expect(res.json.id).toMatch(/^[2-9A-HJ-NP-Za-km-z]{22}$/)
    expect(res.json.key).toMatch(/^gck_live_[A-Za-z0-9_-]{43}$/) // 256 random bits
    const [row] = await sql<{ key_hash: string; key_prefix: string }>(
      'select key_hash, key_prefix from api_keys where id = $1',
      [parseId(res.json.id)],
    )
    expect(row!.key_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(row!.key_hash).not.toContain(res.json.key.slice(9))
    expect(JSON.stringify(await sql('select * from api_keys where id = $1', [parseId(res.json.id)]))).not.toContain(
      res.json.key,
    )
    // the new key works at once
    expect((await get(`${ORGS}/${org.id}/members`, res.json.key)).status).toBe(200)
  })

  test('create with every field', async () => {
    const org = await createOrganization()
    const res = await post(
      keysOf(org.id),
      { name: 'CI', description: 'deploys', role: 'editor', metadata: { team: 'ops' } },
      org.key,
    )
    expect(res.json).toMatchObject({ name: 'CI', description: 'deploys', role: 'editor', metadata: { team: 'ops' } })
  })

  test.each([
    ['name empty', { name: '' }, 'name'],
    ['name 256', { name: 'x'.repeat(256) }, 'name'],
    ['name missing', { description: 'x' }, 'name'],
    ['description 256', { name: 'k', description: 'd'.repeat(256) }, 'description'],
    ['unknown role', { name: 'k', role: 'admin' }, 'role'],
    [
      'metadata 51 keys',
      { name: 'k', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      'metadata',
    ],
    ['metadata key 41', { name: 'k', metadata: { ['k'.repeat(41)]: 'v' } }, `metadata.${'k'.repeat(41)}`],
    ['metadata value 501', { name: 'k', metadata: { a: 'v'.repeat(501) } }, 'metadata.a'],
    ['metadata value not a string', { name: 'k', metadata: { a: 1 } }, 'metadata.a'],
  ])('rejects %s with 422 and writes nothing', async (_, body, field) => {
    const org = await createOrganization()
    const before = await tableCounts()
    const res = await post(keysOf(org.id), body, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors.map((e: { field: string }) => e.field)).toContain(field)
    expect(await tableCounts()).toEqual(before)
  })

  test('accepts each bound exactly', async () => {
    const org = await createOrganization()
    const metadata = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(38)}${i.toString().padStart(2, '0')}`, 'v'.repeat(500)]),
    )
    const res = await post(keysOf(org.id), { name: 'x'.repeat(255), description: 'd'.repeat(255), metadata }, org.key)
    expect(res.status).toBe(200)
    expect(Object.keys(res.json.metadata)).toHaveLength(50)
    expect((await post(keysOf(org.id), { name: 'x' }, org.key)).status).toBe(200)
  })

  test('list shows live keys masked to 8 characters and "..."', async () => {
    const org = await createOrganization()
    const created = await post(keysOf(org.id), { name: 'second', role: 'editor' }, org.key)
    const res = await get(keysOf(org.id), org.key)
    expect(res.status).toBe(200)
    expect(res.json.pagination).toEqual({
      page: 1,
      page_size: 25,
      total_count: 2,
      total_pages: 1,
      has_next: false,
      has_previous: false,
    })
    const listed = res.json.data.find((k: { id: string }) => k.id === created.json.id)
    expect(listed).toEqual({ ...created.json, key: `${created.json.key.slice(0, 8)}...` })
    expect(res.text).not.toContain(created.json.key)
  })

  test('revoke: 204, the key stops working on the next request, and leaves the list', async () => {
    const org = await createOrganization()
    const other = await post(keysOf(org.id), { name: 'temp', role: 'readonly' }, org.key)
    expect((await get(`${ORGS}/${org.id}/members`, other.json.key)).status).toBe(200) // now cached
    const res = await del(`${keysOf(org.id)}/${other.json.id}`, org.key)
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expectProblem(await get(`${ORGS}/${org.id}/members`, other.json.key), 401, 'unauthenticated')
    const list = await get(keysOf(org.id), org.key)
    expect(list.json.data.map((k: { id: string }) => k.id)).not.toContain(other.json.id)
    expectProblem(await del(`${keysOf(org.id)}/${other.json.id}`, org.key), 404, 'not_found')
  })

  test('revoke by canonical UUID works too', async () => {
    const org = await createOrganization()
    const other = await post(keysOf(org.id), { name: 'temp' }, org.key)
    expect((await del(`${keysOf(parseId(org.id)!)}/${parseId(other.json.id)}`, org.key)).status).toBe(204)
  })

  test('401 for a missing, malformed or unknown key', async () => {
    const org = await createOrganization()
    expectProblem(await get(keysOf(org.id)), 401, 'unauthenticated')
    expectProblem(await get(keysOf(org.id), 'nonsense'), 401, 'unauthenticated')
    expectProblem(await get(keysOf(org.id), `gck_live_${'A'.repeat(43)}`), 401, 'unauthenticated')
    // 401 comes before validation: an unauthenticated bad body is still 401
    expectProblem(await post(keysOf(org.id), { name: '' }), 401, 'unauthenticated')
  })

  test('editor and readonly keys cannot manage keys (403), and write nothing', async () => {
    const org = await createOrganization()
    for (const role of ['editor', 'readonly'] as const) {
      const key = await createKey(org, role)
      const before = await tableCounts()
      expectProblem(await post(keysOf(org.id), { name: 'x' }, key), 403, 'forbidden')
      expectProblem(await get(keysOf(org.id), key), 403, 'forbidden')
      expectProblem(await del(`${keysOf(org.id)}/${org.keyId}`, key), 403, 'forbidden')
      expect(await tableCounts()).toEqual(before)
    }
  })

  test("a key of organization A gets 403 on every organization-B path and cannot revoke B's keys", async () => {
    const [a, b] = await Promise.all([createOrganization(), createOrganization()])
    const before = await tableCounts()
    expectProblem(await post(keysOf(b.id), { name: 'x' }, a.key), 403, 'forbidden')
    expectProblem(await get(keysOf(b.id), a.key), 403, 'forbidden')
    expectProblem(await del(`${keysOf(b.id)}/${b.keyId}`, a.key), 403, 'forbidden')
    // B's key id under A's own path is simply not found
    expectProblem(await del(`${keysOf(a.id)}/${b.keyId}`, a.key), 404, 'not_found')
    expect(await tableCounts()).toEqual(before)
    expect((await get(keysOf(b.id), b.key)).status).toBe(200)
  })

  test('ids that are neither shortuuid nor UUID are 422', async () => {
    const org = await createOrganization()
    expectProblem(await get(`${ORGS}/not-an-id/api-keys`, org.key), 422, 'validation_error')
    expectProblem(await del(`${keysOf(org.id)}/0OIl0OIl0OIl0OIl0OIl0O`, org.key), 422, 'validation_error')
    // 22 shortuuid letters, but past 2^128: not a UUID either
    const before = await tableCounts()
    const res = await call('DELETE', `${keysOf(org.id)}/zzzzzzzzzzzzzzzzzzzzzz`, { key: org.key })
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors).toEqual([{ field: 'key_id', message: expect.any(String) }])
    expect(await tableCounts()).toEqual(before)
  })
})
