import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parseId } from '../../src/shared/ids'
import { eventually } from '../support/eventually'
import { createOrganization, ORGS, sql } from '../support/fixtures'
import { startServer } from '../support/process'
import { databaseUrl, del, post } from '../support/server'

// A second server process on the same database, with a long key-cache TTL: the in-process test
// server revokes, the other process must refuse the key on its next request.
let other: Awaited<ReturnType<typeof startServer>>
beforeAll(async () => {
  other = await startServer({ DATABASE_URL: databaseUrl, ROLE: 'api', KEY_CACHE_TTL: '3600', LOG_LEVEL: 'warn' })
})
afterAll(async () => {
  other.kill('SIGTERM')
  await other.exited
})

const membersVia = (url: string, orgId: string, key: string) =>
  fetch(`${url}/account/api/v1/organizations/${orgId}/members`, { headers: { 'x-api-key': key } }).then((r) => r.status)

describe('API key cache across processes', () => {
  test('a verified key is served from the cache (no database lookup per request)', async () => {
    const org = await createOrganization()
    const made = await post(`${ORGS}/${org.id}/api-keys`, { name: 'cached' }, org.key)
    expect(await membersVia(other.url, org.id, made.json.key)).toBe(200) // now cached there
    // Revoked behind the service's back (no notification): the cache keeps answering for it,
    // which shows authentication did not go to the database.
    await sql('update api_keys set revoked_at = now() where id = $1', [parseId(made.json.id)])
    expect(await membersVia(other.url, org.id, made.json.key)).toBe(200)
  })

  test('revocation through the API takes effect in the other process at once', async () => {
    const org = await createOrganization()
    const made = await post(`${ORGS}/${org.id}/api-keys`, { name: 'doomed' }, org.key)
    expect(await membersVia(other.url, org.id, made.json.key)).toBe(200)
    expect(await membersVia(other.url, org.id, made.json.key)).toBe(200)
    const revoked = await del(`${ORGS}/${org.id}/api-keys/${made.json.id}`, org.key)
    expect(revoked.status).toBe(204)
    // The notification is sent on commit and crosses processes; with the hour-long cache TTL
    // nothing but it can end the 200s.
    const status = await eventually(
      async () => {
        const s = await membersVia(other.url, org.id, made.json.key)
        return s !== 200 && s
      },
      20_000,
      'the revocation to reach the other process',
    )
    expect(status).toBe(401)
  })
})
