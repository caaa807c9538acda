import { sql } from 'drizzle-orm'
import { PgTransaction } from 'drizzle-orm/pg-core'
import { fromDrizzle, type JobInsert, type Queue, type SendOptions } from 'pg-boss'
import { boss } from './boss'
import type { Executor } from './tx'

export type QueueOptions = Omit<Queue, 'name' | 'deadLetter'>

/** What pg-boss needs to create a queue, whatever its jobs carry. */
export type QueueSpec = {
  /** `<feature>.<verb>` (dead-letter queues: `<name>.dead`) */
  name: string
  /** null: this is a dead-letter queue itself (deadLettersOf) */
  deadLetter: string | null
  options: QueueOptions
  /**
   * Names this queue had before: their waiting jobs are run by this queue's worker until none is
   * left, then the old queues are deleted (src/runtime/retired-queues.ts), so a rename loses no job.
   */
  formerly: readonly string[]
}

/**
 * A pg-boss queue, declared in its feature's `queues.ts`; the feature's index binds one worker to
 * it (src/runtime/workers.ts). Every queue has a dead-letter queue, `<name>.dead`, where jobs go
 * once their retries are spent, so a poisoned job is kept for inspection instead of retried forever.
 * `P` is what its jobs carry: `send`, `insert` and the worker's handler all take it.
 */
export type QueueDef<P extends object> = QueueSpec & {
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

export function defineQueue<P extends object>(
  name: string,
  options: QueueOptions = {},
  { formerly = [] }: { formerly?: readonly string[] } = {},
): QueueDef<P> {
  const deadLetter = `${name}.dead`
  return {
    name,
    deadLetter,
    options,
    formerly,
    send: (ex, data, sendOptions = {}) => started().send(name, data, { ...sendOptions, ...bossDb(ex) }),
    insert: async (ex, jobs) => {
      if (jobs.length) await started().insert(name, jobs, bossDb(ex))
    },
  }
}

/**
 * A queue's dead-letter queue as a queue a worker can bind: its jobs carry the data of the jobs
 * whose retries were spent (a worker killed on every attempt included), so a feature can record
 * the failure on what the job was doing.
 */
export function deadLettersOf<P extends object>(queue: QueueDef<P>): QueueDef<P> {
  if (!queue.deadLetter) throw new Error(`${queue.name} is a dead-letter queue`)
  return {
    ...defineQueue<P>(queue.deadLetter, DEAD_LETTER_OPTIONS, {
      formerly: queue.formerly.map((name) => `${name}.dead`),
    }),
    deadLetter: null,
  }
}

const DEAD_LETTER_OPTIONS = { retentionSeconds: 30 * 24 * 3600, deleteAfterSeconds: 30 * 24 * 3600 }

/**
 * Creates a queue and its dead-letter queue (idempotent; every process may send to it), and brings
 * an existing queue's retry and retention options to what its declaration says now (createQueue
 * leaves an existing queue as it was created: a lowered retry limit would otherwise never apply).
 */
export async function createQueue(queue: QueueSpec) {
  if (queue.deadLetter === null) {
    await boss.createQueue(queue.name, queue.options)
    return
  }
  await boss.createQueue(queue.deadLetter, DEAD_LETTER_OPTIONS)
  await boss.createQueue(queue.name, { ...queue.options, deadLetter: queue.deadLetter })
  const { partition: _p, policy: _q, retryDelayMax: _r, heartbeatSeconds: _h, ...updatable } = queue.options
  await boss.updateQueue(queue.name, { ...updatable, deadLetter: queue.deadLetter })
}
