// Waiting for background work without fixed sleeps: poll what the test can observe, and ask the
// queues whether anything is still to run (so "nothing else arrives" is a fact, not a guess).

/** A check's "not yet": null, undefined or false (0 and '' are values). */
type NotYet = null | undefined | false

/** Polls `check` until it returns a value, for work done by background jobs or other processes. */
export async function eventually<T>(
  check: () => Promise<T | NotYet> | T | NotYet,
  ms = 20_000,
  what = 'background work',
): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== null && value !== undefined && value !== false) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

export type Query = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>

/**
 * The jobs of the given queues running or due on the database `query` reads. A queue is named
 * exactly or by its prefix ('webhooks' is every `webhooks.…` queue); dead-letter queues are left
 * out. With `dueWithin`, a job scheduled to start within that many milliseconds (a short retry)
 * counts as due.
 */
export async function pendingJobs(queues: string[], query: Query, dueWithin = 0): Promise<number> {
  const [row] = await query<{ n: number }>(
    `select count(*)::int n from pgboss.job
      where name like any($1::text[]) and name not like '%.dead'
        and (state = 'active' or (state in ('created', 'retry')
             and start_after <= now() + make_interval(secs => $2::float8 / 1000)))`,
    [queues.flatMap((q) => [q, `${q}.%`]), dueWithin],
  )
  return row!.n
}

/**
 * Waits until no job of the given queues is running or due (pendingJobs), so a test may then
 * assert that nothing else arrives.
 */
export async function drained(queues: string[], query: Query, opts: { ms?: number; dueWithin?: number } = {}) {
  await eventually(
    async () => (await pendingJobs(queues, query, opts.dueWithin)) === 0,
    opts.ms ?? 20_000,
    `the queues ${queues.join(', ')} to drain`,
  )
}
