// What held an import back, printed beside the ingest bench's figures: whether the database's
// sessions were working or waiting for the server (its one JavaScript thread), and which of the
// server's threads used its CPU. Brief I3 needed both to tell a JavaScript-bound import from a
// database- or CPU-bound one; neither changes what the bench measures.
import { readdirSync, readFileSync } from 'node:fs'
import type { Pool } from 'pg'

/** CPU seconds of each thread of a process (Linux /proc), by thread name. */
function threadSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const fields = stat.split(') ')[1]!.split(' ')
      const name =
        Number(tid) === pid ? 'JavaScript (main thread)' : stat.slice(stat.indexOf('(') + 1, stat.indexOf(') '))
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100)
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName
}

/** The server's process: this process's child running bun (bin/serve execs it). */
export function serverPid(): number | null {
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d)))
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')
      if (Number(fields[1]) === process.pid && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('main.ts'))
        return Number(p)
    } catch {
      // gone meanwhile
    }
  return null
}

/**
 * Starts watching: the server's threads (CPU from now) and the database's client sessions (sampled
 * every 200 ms). `report()` stops and returns the lines to print.
 */
export function watchImport(pool: Pool, pid: number | null) {
  const before = pid ? threadSeconds(pid) : new Map<string, number>()
  const totals = { samples: 0, working: 0, waitingForServer: 0, waitingOnLocks: 0, waitingOnIo: 0 }
  let busy = false
  const timer = setInterval(async () => {
    if (busy) return
    busy = true
    try {
      const { rows } = await pool.query<Record<keyof typeof totals, number>>(`select
          count(*) filter (where state = 'active' and wait_event_type is null)::int as "working",
          count(*) filter (where state like 'idle in transaction%')::int as "waitingForServer",
          count(*) filter (where state = 'active' and wait_event_type = 'Lock')::int as "waitingOnLocks",
          count(*) filter (where state = 'active' and wait_event_type in ('LWLock', 'IO'))::int as "waitingOnIo"
        from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()`)
      totals.samples++
      for (const key of ['working', 'waitingForServer', 'waitingOnLocks', 'waitingOnIo'] as const)
        totals[key] += rows[0]![key]
    } finally {
      busy = false
    }
  }, 200)
  return {
    report(): string[] {
      clearInterval(timer)
      const n = Math.max(1, totals.samples)
      const lines = [
        `database sessions on average (${totals.samples} samples): working ${(totals.working / n).toFixed(2)}, ` +
          `idle in a transaction (waiting for the server) ${(totals.waitingForServer / n).toFixed(2)}, ` +
          `waiting on locks ${(totals.waitingOnLocks / n).toFixed(2)}, on WAL/IO ${(totals.waitingOnIo / n).toFixed(2)}`,
      ]
      if (pid) {
        const after = threadSeconds(pid)
        const used = [...after]
          .map(([name, s]) => [name, s - (before.get(name) ?? 0)] as const)
          .filter(([, s]) => s >= 0.05)
          .sort((a, b) => b[1] - a[1])
        lines.push(`server CPU by thread: ${used.map(([name, s]) => `${name} ${s.toFixed(1)} s`).join(', ')}`)
      }
      return lines
    },
  }
}
