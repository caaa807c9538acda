import { chownSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import { dirname, join } from 'node:path'

/**
 * The embedded cluster's memory and WAL settings, sized to the machine. PostgreSQL's own defaults
 * (128 MB of shared buffers; a checkpoint after about 540 MB of WAL, max_wal_size 1 GB) suit a
 * server sharing a small machine: a catalog of a million products keeps its search documents'
 * indexes in the operating system's cache instead, and a million-row import, which writes 2.7-4.5
 * GB of WAL, checkpointed several times and wrote each page whole again after every checkpoint.
 * Measured (issue 45, 300,000 products, the search drain alone, two sessions, alternated): 10,951-
 * 10,989 documents a second with the defaults, 14,956-15,158 with 1 GB of buffers and max_wal_size
 * 4 GB (a checkpoint after about 2 GB; the WAL directory can then hold up to 4 GB on disk).
 *
 * An eighth of the memory this process may use (the machine's, or its control groups' lowest
 * limit), at least PostgreSQL's 128 MB and at most 1 GB; max_wal_size 4 GB.
 */
export function sizedSettings(memoryBytes: number): { shared_buffers: string; max_wal_size: string } {
  const eighth = Math.floor(memoryBytes / 8 / 1024 / 1024)
  return {
    shared_buffers: `${Math.max(128, Math.min(1024, eighth))}MB`,
    max_wal_size: '4GB',
  }
}

type Read = (file: string) => string

const readText: Read = (file) => readFileSync(file, 'utf8')

/**
 * The memory this process may use: the machine's, or the lowest limit of its control group and
 * the groups above it (cgroup v2's `memory.max`, v1's `memory.limit_in_bytes`), read from the
 * group /proc/self/cgroup names. `max` (v2) and v1's near-2^63 are no limit.
 */
export function availableMemory(read: Read = readText, machine = totalmem()): number {
  const limits: number[] = []
  let groups = ''
  try {
    groups = read('/proc/self/cgroup')
  } catch {
    return machine
  }
  for (const line of groups.split('\n')) {
    // `0::/path` (v2), `N:memory:/path` or `N:cpu,memory:/path` (v1)
    const [, controllers, path] = line.match(/^\d+:([^:]*):(\/.*)$/) ?? []
    if (path === undefined) continue
    const v2 = controllers === ''
    if (!v2 && !controllers!.split(',').includes('memory')) continue
    const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory'
    const file = v2 ? 'memory.max' : 'memory.limit_in_bytes'
    // the group and each one above it, up to the root of what this process sees
    for (let dir = join(root, path); dir.startsWith(root); dir = dirname(dir)) {
      try {
        const value = Number(read(join(dir, file)).trim())
        if (Number.isFinite(value) && value > 0) limits.push(value)
      } catch {
        // not there: no limit at that level
      }
      if (dir === root) break
    }
  }
  return Math.min(machine, ...limits)
}

/**
 * Writes the sized settings at the end of a cluster's postgresql.conf: called once, when the
 * service has just created the cluster (a cluster it did not create keeps what its operator set).
 * A line after them, or EMBEDDED_POSTGRES_SETTINGS (passed as `-c`, which wins over the file),
 * changes them. The file is written whole and renamed into place, with its owner and mode, so a
 * write cut short leaves the file as initdb made it.
 */
export function sizeNewCluster(dataDir: string, memoryBytes = availableMemory()): void {
  const file = join(dataDir, 'postgresql.conf')
  const lines = Object.entries(sizedSettings(memoryBytes)).map(([name, value]) => `${name} = '${value}'`)
  const block = `\n# Sized to the machine by the service when it created this cluster (src/db/embedded-sizing.ts).\n# Change them below, or with EMBEDDED_POSTGRES_SETTINGS.\n${lines.join('\n')}\n`
  const { uid, gid, mode } = statSync(file)
  const next = `${file}.sizing`
  writeFileSync(next, readFileSync(file, 'utf8') + block, { mode: mode & 0o777 })
  chownSync(next, uid, gid)
  renameSync(next, file)
}
