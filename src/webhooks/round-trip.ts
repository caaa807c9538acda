import pg from 'pg'
import { db } from '../db/client'

/**
 * The dispatcher's hot statements (a claim, a batch of settled successes) run as one simple-protocol
 * query: PostgreSQL runs the statements of one query string as one transaction, each statement with
 * its own snapshot, and answers in one round trip. A transaction of its own (BEGIN, statements,
 * COMMIT) took a round trip per statement, and a parameterised statement two socket writes where
 * this takes one. Hence the values are written into the text, through `numeral` and `literal`.
 *
 * A statement given as `Prepared` is parsed and planned once per connection (`force_generic_plan`),
 * with sequential scans ruled out (`enable_seqscan = off`) so that its plan reads every table by an
 * index whatever the table's size when the plan was made: planned at each execution, the claim and
 * the settle spent about 1 ms each in the planner, a quarter of PostgreSQL's time per delivery. (A
 * generic plan made while the deliveries were few, a service's first minutes, once read the whole
 * table for every batch as it grew; every table these statements read has the index they need, and
 * their joins to the input arrays and to events go through `= any` and lateral lookups by key.)
 *
 * Their commits do not wait for the WAL to reach the disk (`synchronous_commit = off` for that
 * transaction only): a crash of PostgreSQL may lose the last fraction of a second of claims and
 * settlements, and a lost one is an attempt made again after its lease: a delivery sent twice, which
 * receivers already deduplicate by event id (a worker dying mid-attempt does the same). The claims
 * run one at a time, so a flush per claim was also the ceiling of their rate.
 */
export async function inOneRoundTrip<R>(...statements: (string | Prepared)[]): Promise<R[]> {
  const [rows] = await inTransactionsOfOneRoundTrip<R>(statements)
  return rows!
}

/**
 * Several transactions in one round trip, one after the other, each as inOneRoundTrip runs one (an
 * explicit BEGIN and COMMIT around each): a transaction commits before the next one starts, so a
 * later one that waits for a lock holds nothing of an earlier one. Returns the rows of each
 * transaction's last statement. When a statement fails, nothing of its transaction is kept, the
 * transactions after it do not run, and the error does not say which one it was (those before it
 * have committed).
 */
export async function inTransactionsOfOneRoundTrip<R>(...transactions: (string | Prepared)[][]): Promise<R[][]> {
  const client = await db.$client.connect()
  let failed: Error | undefined
  try {
    const ready = preparedOn.get(client) ?? new Set<string>()
    preparedOn.set(client, ready)
    for (const s of transactions.flat())
      if (typeof s !== 'string' && !ready.has(s.name)) {
        // a statement of its own: a PREPARE in a transaction that fails is not undone
        await client.query(`prepare ${s.name}(${s.types.join(', ')}) as ${s.text}`)
        ready.add(s.name)
      }
    const one = transactions.length === 1
    const text = transactions
      .flatMap((statements) => [
        // a lone transaction is the query's implicit one
        ...(one ? [] : ['begin']),
        'set local synchronous_commit = off',
        'set local plan_cache_mode = force_generic_plan',
        'set local enable_seqscan = off',
        ...statements.map((s) => (typeof s === 'string' ? s : `execute ${s.name}(${s.args.join(', ')})`)),
        ...(one ? [] : ['commit']),
      ])
      .join(';\n')
    const raw = (await client.query(text)) as unknown as { rows: R[] } | { rows: R[] }[]
    const results = Array.isArray(raw) ? raw : [raw]
    // each transaction's results: begin, three settings, its statements, commit
    const rows: R[][] = []
    let at = 0
    for (const statements of transactions) {
      at += (one ? 0 : 1) + 3 + statements.length
      rows.push(results[at - 1]!.rows)
      at += one ? 0 : 1
    }
    return rows
  } catch (err) {
    failed = err as Error
    throw err
  } finally {
    // as pg's pool.query does: a connection that failed a statement is not reused
    client.release(failed)
  }
}

/** A statement prepared once per connection (`$1`… of `types`), executed with `args` (written in). */
export type Prepared = { name: string; types: string[]; text: string; args: string[] }
const preparedOn = new WeakMap<pg.PoolClient, Set<string>>()

/** A number written into a statement's text. */
export function numeral(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`)
  return String(value)
}

/**
 * A string written into a statement's text as a quoted literal, as pg's `escapeLiteral` writes it.
 * Text without a quote or a backslash (the settle's arrays of ids, numbers and times) is only put
 * between quotes: escapeLiteral builds its answer a character at a time, 2 % of the service's CPU
 * samples in a burst.
 */
export const literal = (text: string): string =>
  text.includes("'") || text.includes('\\') ? pg.escapeLiteral(text) : `'${text}'`
