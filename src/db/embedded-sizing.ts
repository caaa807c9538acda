import { appendFileSync, readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import { join } from 'node:path'

/**
 * The embedded cluster's memory and WAL settings, sized to the machine. PostgreSQL's own defaults
 * (128 MB of shared buffers, a checkpoint every 1 GB of WAL) are sized for a server that shares a
 * small machine: a catalog of a million products keeps its search documents' indexes in the
 * operating system's cache instead, and a million-row import writes 4 GB of WAL, so it checkpoints
 * four times and writes each page again whole after every checkpoint. Measured (issue 45, 300,000
 * products, the search drain alone, two sessions, alternated): 10,951-10,989 documents a second
 * with the defaults, 14,956-15,158 with 1 GB of buffers and 4 GB between checkpoints.
 *
 * An eighth of the memory this process may use (the machine's, or its control group's limit when
 * lower), at least PostgreSQL's 128 MB and at most 1 GB; 4 GB of WAL between checkpoints (disk only).
 */
export function sizedSettings(memoryBytes: number): { shared_buffers: string; max_wal_size: string } {
  const eighth = Math.floor(memoryBytes / 8 / 1024 / 1024)
  return {
    shared_buffers: `${Math.max(128, Math.min(1024, eighth))}MB`,
    max_wal_size: '4GB',
  }
}

/** The memory this process may use: the machine's, or its control group's limit (cgroup v2 or v1) when lower. */
export function availableMemory(): number {
  const limits = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'].flatMap((file) => {
    try {
      const value = Number(readFileSync(file, 'utf8').trim())
      return Number.isFinite(value) && value > 0 ? [value] : [] // `max`: no limit
    } catch {
      return []
    }
  })
  return Math.min(totalmem(), ...limits)
}

const MARK = '# Sized to the machine by the service (src/db/embedded-sizing.ts), once.'

/**
 * Appends the sized settings to the cluster's postgresql.conf once (a cluster made before they
 * existed gets them at its next start), where a line after them, or EMBEDDED_POSTGRES_SETTINGS
 * (passed as `-c`, which wins over the file), can change them.
 */
export function sizeCluster(dataDir: string, memoryBytes = availableMemory()): void {
  const file = join(dataDir, 'postgresql.conf')
  if (readFileSync(file, 'utf8').includes(MARK)) return
  const lines = Object.entries(sizedSettings(memoryBytes)).map(([name, value]) => `${name} = '${value}'`)
  appendFileSync(
    file,
    `\n${MARK}\n# Change them below this block, or with EMBEDDED_POSTGRES_SETTINGS.\n${lines.join('\n')}\n`,
  )
}
