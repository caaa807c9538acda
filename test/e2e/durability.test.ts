import { describe, expect, test } from 'bun:test'
import { parseId } from '../../src/shared/ids'
import { eventually } from '../support/eventually'
import { ADMIN, createOrganization, ORGS, RETAILERS, sql } from '../support/fixtures'
import { startServer } from '../support/process'
import { databaseUrl } from '../support/server'

// Issue 3, "done when" 3: kill -9 the server in the middle of a stream of writes, restart it,
// and check that every acknowledged write is there, no write is half there, and the outbox has
// an event exactly for each committed change.
describe('crash safety', () => {
  test('SIGKILL mid-write loses no committed row and leaves no half-written one', async () => {
    const org = await createOrganization()
    const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN['x-admin-token'] }
    const server = await startServer(env)
    const acknowledgedRetailers: string[] = []
    const acknowledgedOrgs: string[] = []
    let stop = false
    const writer = async (n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          if (i % 4 === 3) {
            const res = await fetch(`${server.url}${ORGS}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...ADMIN },
              body: JSON.stringify({ name: `crash-org-${n}-${i}`, owner_email: `c${n}-${i}@crash.test` }),
            })
            if (res.status === 201)
              acknowledgedOrgs.push(((await res.json()) as { organization: { id: string } }).organization.id)
          } else {
            const res = await fetch(`${server.url}${RETAILERS}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': org.key },
              body: JSON.stringify({ name: `crash-${n}-${i}`, metadata: { writer: String(n) } }),
            })
            if (res.status === 201) acknowledgedRetailers.push(((await res.json()) as { id: string }).id)
          }
        } catch {
          return // connection refused or reset: the server is gone
        }
      }
    }
    const writers = Array.from({ length: 16 }, (_, n) => writer(n))
    await eventually(() => acknowledgedRetailers.length >= 150, 60_000, '150 acknowledged writes')
    server.kill('SIGKILL')
    await server.exited
    stop = true
    await Promise.all(writers)

    const restarted = await startServer(env)
    try {
      expect((await fetch(`${restarted.url}/readyz`)).status).toBe(200)
      const orgId = parseId(org.id)
      const stored = await sql<{ id: string; events: number }>(
        `select r.id, (select count(*)::int from events e where e.subject_id = r.id and e.event_type = 'retailer.created') events
         from retailers r where r.organization_id = $1`,
        [orgId],
      )
      const storedIds = new Set(stored.map((r) => r.id))
      for (const id of acknowledgedRetailers) expect(storedIds.has(parseId(id)!)).toBe(true)
      expect(stored.length).toBeGreaterThanOrEqual(acknowledgedRetailers.length)
      for (const r of stored) expect(r.events).toBe(1) // event iff change
      const orphanEvents = await sql<{ n: number }>(
        `select count(*)::int n from events e where e.organization_id = $1 and not exists (select 1 from retailers r where r.id = e.subject_id)`,
        [orgId],
      )
      expect(orphanEvents[0]!.n).toBe(0)

      // organization creation writes three rows; each organization has all three or none
      const orgs = await sql<{ id: string; members: number; keys: number }>(
        `select o.id, (select count(*)::int from members m where m.organization_id = o.id) members,
                (select count(*)::int from api_keys k where k.organization_id = o.id) keys
         from organizations o where o.name like 'crash-org-%'`,
      )
      const orgIds = new Set(orgs.map((o) => o.id))
      for (const id of acknowledgedOrgs) expect(orgIds.has(parseId(id)!)).toBe(true)
      for (const o of orgs) expect([o.members, o.keys]).toEqual([1, 1])

      // the restarted server serves what was written
      const list = await fetch(`${restarted.url}${RETAILERS}?organization_id=${org.id}&page_size=1`, {
        headers: { 'x-api-key': org.key },
      })
      expect(((await list.json()) as { pagination: { total_count: number } }).pagination.total_count).toBe(
        stored.length,
      )
    } finally {
      restarted.kill('SIGTERM')
      await restarted.exited
    }
  }, 60_000)
})
