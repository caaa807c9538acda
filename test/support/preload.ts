// Runs once before the test files: a real PostgreSQL (embedded in a temp dir unless DATABASE_URL
// is set), migrated, and the app served on a loopback port. Nothing is mocked.
import { afterAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

process.env.LOG_LEVEL ??= 'silent'
process.env.ADMIN_TOKEN ??= 'test-admin-token-0123456789'
process.env.NODE_ENV ??= 'test'
// throwaway clusters (this lane's and those of the processes its tests start): commits need not
// wait for the disk (nothing here survives a crash of the machine anyway)
process.env.EMBEDDED_POSTGRES_FSYNC ??= 'off'
// the main test server's anonymous search limit is out of the way; test/integration/search/rate-limit.test.ts runs its own servers at 60
process.env.SEARCH_ANONYMOUS_PER_MINUTE ??= '1000000'
process.env.RESOLVER_ANONYMOUS_PER_MINUTE ??= '1000000'
// performance imports are cut into small chunks so a test file of a few hundred rows has several
process.env.PERFORMANCE_CHUNK_ROWS ??= '100'
const dataDir = mkdtempSync(join(tmpdir(), 'gtin-catalog-test-'))
process.env.DATA_DIR = dataDir

const { config } = await import('../../src/config')
const { openDatabase, startBackground } = await import('../../src/runtime')
const { features } = await import('../../src/features')
const { createApp } = await import('../../src/app')
const { setServer } = await import('./server')
const { closeSql } = await import('./fixtures')

const database = await openDatabase(config)
const stopBackground = await startBackground(config, database.url, features, true)
const app = createApp().listen({ port: 0, hostname: '127.0.0.1' })
setServer(`http://127.0.0.1:${app.server!.port}`, database.url)

afterAll(async () => {
  await app.stop(true)
  await closeSql()
  await stopBackground()
  await database.close()
  rmSync(dataDir, { recursive: true, force: true })
})
