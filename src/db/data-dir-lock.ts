import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRunning, startTimeOf } from './processes'

/**
 * Who owns a DATA_DIR's embedded cluster: a server, or a CLI command that started the cluster
 * itself because no server was running. `started` (the process's start time) tells a live owner
 * from a new process that happens to have its pid (after a reboot, or pid 1 in a new container).
 */
export type LockHolder = { pid: number; started: string | null; kind: 'server' | 'command' }

/** The lock file in DATA_DIR: JSON of its holder, created with O_EXCL, removed by its holder. */
export const LOCK_FILE = 'server.pid'

export type DataDirLock = { release: () => void }

/** The holder named in the lock file; undefined while it is empty (its creator is writing it). */
function readHolder(path: string): LockHolder | null | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return null
  }
  if (text === '') return undefined
  try {
    const holder = JSON.parse(text) as LockHolder
    return Number.isInteger(holder.pid) ? holder : null
  } catch {
    return null
  }
}

/** Whether the holder is a live process other than this one, the one that wrote the file. */
function isAlive(holder: LockHolder): boolean {
  if (holder.pid === process.pid || !isRunning(holder.pid)) return false
  const started = startTimeOf(holder.pid)
  return holder.started === null || started === null || started === holder.started
}

/**
 * Takes DATA_DIR's lock for this process, or names the live process that holds it. A lock whose
 * holder has died (a killed server) is stale and taken over. Two processes taking over the same
 * stale lock at the same instant could both believe they hold it: the caller checks `holdsLock`
 * once more before it acts, and PostgreSQL's own lock on its data directory (postmaster.pid)
 * still lets only one cluster start.
 */
export function lockDataDir(dataDir: string, kind: LockHolder['kind']): { lock: DataDirLock } | { holder: LockHolder } {
  const path = join(dataDir, LOCK_FILE)
  const mine: LockHolder = { pid: process.pid, started: startTimeOf(process.pid), kind }
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(mine)}\n`, { flag: 'wx' })
      return { lock: ownLock(path) }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err
    }
    const holder = readHolder(path)
    if (holder === undefined && attempt < 3) {
      Bun.sleepSync(20) // written by its creator in this instant
      continue
    }
    if (holder && isAlive(holder)) return { holder }
    rmSync(path, { force: true })
  }
}

/** The process owns the lock until it releases it or exits (a kill -9 leaves it stale, see above). */
function ownLock(path: string): DataDirLock {
  const release = () => {
    if (readHolder(path)?.pid === process.pid) rmSync(path, { force: true })
  }
  process.once('exit', release)
  return {
    release: () => {
      process.off('exit', release)
      release()
    },
  }
}

/** Whether this process still holds the lock (a check right before acting on what it guards). */
export function holdsLock(dataDir: string): boolean {
  return readHolder(join(dataDir, LOCK_FILE))?.pid === process.pid
}
