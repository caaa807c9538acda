import { sql } from 'drizzle-orm'
import { PgTransaction } from 'drizzle-orm/pg-core'
import { fromDrizzle, type JobInsert, type Queue, type SendOptions } from 'pg-boss'
import { boss } from './boss'
import type { Executor } from './tx'

export type QueueOptions = Omit<Queue, 'name' | 'deadLetter'>

/**
 * A pg-boss queue, declared by the feature that sends to it (next to its code); `jobs/` binds a
 * handler to it. Every queue has a dead-letter queue, `<name>.dead`, where jobs go once their
 * retries are spent, so a poisoned job is kept for inspection instead of retried forever.
 */
export type QueueDef<P extends object> = {
  name: string
  deadLetter: string
  options: QueueOptions
  /** Sends through the executor: in a transaction, the job exists if and only if it commits. */
  send: (ex: Executor, data: P, options?: SendOptions) => Promise<string | null>
  /** Many jobs in one statement (ids may be given to make a resend a no-op). */
  insert: (ex: Executor, jobs: JobInsert<P>[]) => Promise<void>
}

/** pg-boss's connection option for an executor: a transaction's own connection, else pg-boss's pool. */
export function bossDb(ex: Executor) {
  return ex instanceof PgTransaction ? { db: fromDrizzle(ex as never, sql as never) } : {}
}

function started() {
  if (!boss) throw new Error('pg-boss is not started in this process (startBoss, or startBackground)')
  return boss
}

export function defineQueue<P extends object>(name: string, options: QueueOptions = {}): QueueDef<P> {
  const deadLetter = `${name}.dead`
  return {
    name,
    deadLetter,
    options,
    send: (ex, data, sendOptions = {}) => started().send(name, data, { ...sendOptions, ...bossDb(ex) }),
    insert: async (ex, jobs) => {
      if (jobs.length) await started().insert(name, jobs, bossDb(ex))
    },
  }
}

/** Creates a queue and its dead-letter queue (idempotent; every process may send to it). */
export async function createQueue(queue: QueueDef<any>) {
  await boss.createQueue(queue.deadLetter, { retentionSeconds: 30 * 24 * 3600, deleteAfterSeconds: 30 * 24 * 3600 })
  await boss.createQueue(queue.name, { ...queue.options, deadLetter: queue.deadLetter })
}
