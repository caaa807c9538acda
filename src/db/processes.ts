import { readFileSync } from 'node:fs'

// What this machine says about other processes, read from Linux's /proc where it exists. Without
// /proc (macOS) the answers fall back to kill(pid, 0) and "unknown".

/** The fields of /proc/<pid>/stat after the command name, which may itself hold spaces and parentheses. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** Whether a process exists and is not a zombie (a killed process nobody has reaped yet). */
export function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    // EPERM: it exists, but belongs to another user
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const fields = statFields(pid)
  return fields === null || fields[0] !== 'Z'
}

/**
 * When a process started (clock ticks after boot, field 22 of /proc/<pid>/stat), or null when
 * unknown. A pid and its start time name one process: a pid alone may have been reused.
 */
export function startTimeOf(pid: number): string | null {
  return statFields(pid)?.[19] ?? null
}

/** A process's parent pid, or null when unknown. */
export function parentOf(pid: number): number | null {
  const ppid = statFields(pid)?.[1]
  return ppid === undefined ? null : Number(ppid)
}

/** A process's arguments, or null when unknown. */
export function argumentsOf(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  } catch {
    return null
  }
}
