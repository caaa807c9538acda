import pg from 'pg'
import { ADMIN } from './fixtures'
import { ownDatabase } from './own-database'
import { startServer } from './process'
import { api } from './server'

/**
 * A service process (api and workers, `bin/serve`) on a database of its own, for a test that
 * needs settings the shared server does not have: its jobs run with those settings and see only
 * this file's data. `start` in beforeAll, `stop` in afterAll; `client` holds server.ts's helpers
 * (call/get/post/patch/del, the shared signature) bound to this service; `call` sends JSON with a
 * key, or with the admin token when no key is given; `query` reads the database directly.
 */
export function ownService(prefix: string, env: Record<string, string>) {
  const database = ownDatabase(prefix)
  let server: Awaited<ReturnType<typeof startServer>> | null = null
  let db: pg.Client | null = null
  const client = api(() => server!.url)
  return {
    database,
    client,
    get url() {
      return server!.url
    },
    async start() {
      await database.create()
      server = await startServer({
        DATABASE_URL: database.url,
        ADMIN_TOKEN: ADMIN['x-admin-token'],
        LOG_LEVEL: 'warn',
        ...env,
      })
      db = new pg.Client({ connectionString: database.url })
      await db.connect()
    },
    query: async <T>(text: string, params: unknown[] = []) => (await db!.query(text, params)).rows as T[],
    // the admin token when no key is given; the request itself is the shared one
    call: (method: string, path: string, key?: string, body?: unknown) =>
      client.call(method, path, key ? { key, body } : { headers: ADMIN, body }),
    async stop() {
      server?.kill('SIGTERM')
      await server?.exited
      await db?.end()
      await database.drop()
    },
  }
}
