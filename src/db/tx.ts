import { PgTransaction } from 'drizzle-orm/pg-core'
import type { Db } from './client'
import { db } from './client'

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
/** What services take: the pool, or the caller's transaction. */
export type Executor = Db | Tx

/** Runs `work` in a new transaction; routes, jobs and the CLI own transactions, services take `Executor`. */
export const transaction = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => db.transaction(work)

/** `work` in the caller's transaction when `ex` is one, else in a new transaction of its own. */
export function inTransaction<T>(ex: Executor, work: (tx: Tx) => Promise<T>): Promise<T> {
  return ex instanceof PgTransaction ? work(ex as Tx) : (ex as Db).transaction(work)
}
