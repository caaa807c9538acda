import { sql } from 'drizzle-orm'
import { PgTransaction } from 'drizzle-orm/pg-core'
import type { Db } from './client'
import { db } from './client'

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
/** What services take: the pool, or the caller's transaction. */
export type Executor = Db | Tx

const commitHooks = new WeakMap<Tx, (() => void)[]>()

/**
 * Runs `work` in a new transaction; routes, jobs and the CLI own transactions, services take
 * `Executor`. Functions given to `afterCommit` run once it has committed.
 */
export const transaction = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => begin(db, work)

async function begin<T>(on: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  let hooks: (() => void)[] | undefined
  const result = await on.transaction(async (tx) => {
    const value = await work(tx)
    hooks = commitHooks.get(tx)
    return value
  })
  for (const hook of hooks ?? []) hook()
  return result
}

/** `work` in the caller's transaction when `ex` is one, else in a new transaction of its own. */
export function inTransaction<T>(ex: Executor, work: (tx: Tx) => Promise<T>): Promise<T> {
  return ex instanceof PgTransaction ? work(ex as Tx) : begin(ex as Db, work)
}

/**
 * Runs `hook` (synchronous, in this process) once the executor's transaction has committed, or at
 * once for the pool. Only transactions begun by `transaction`/`inTransaction` run their hooks; a
 * rolled-back transaction never does. For what other processes learn through NOTIFY, so this one
 * sees its own commit without waiting for its notification to come back.
 */
export function afterCommit(ex: Executor, hook: () => void) {
  if (!(ex instanceof PgTransaction)) return hook()
  const hooks = commitHooks.get(ex as Tx)
  if (hooks) hooks.push(hook)
  else commitHooks.set(ex as Tx, [hook])
}

let savepoints = 0

/**
 * Runs `work` in a savepoint of `tx`: all of it, or (when it throws) none of it, the transaction
 * going on. Unlike drizzle's nested transactions, a savepoint that failed is released after its
 * rollback: left open, each stays a subtransaction level that every later write nests in, and a
 * transaction with more than 64 subtransactions makes every snapshot in the cluster read
 * pg_subtrans until it ends. `work` writes through `tx` itself, so a hook it gives afterCommit runs
 * even when its savepoint was rolled back (none of its callers gives one).
 */
export async function inSavepoint<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
  const name = sql.raw(`part_${++savepoints}`)
  await tx.execute(sql`savepoint ${name}`)
  let value: T
  try {
    value = await work()
  } catch (err) {
    try {
      await tx.execute(sql`rollback to savepoint ${name}`)
      await tx.execute(sql`release savepoint ${name}`)
    } catch {
      // the connection or transaction is gone: the caller learns of the first error
    }
    throw err
  }
  await tx.execute(sql`release savepoint ${name}`)
  return value
}
