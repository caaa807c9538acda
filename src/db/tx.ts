import type { Db } from './client'
import { db } from './client'
import { events } from './schema'

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
export type Executor = Db | Tx

export type NewEvent = {
  eventType: string
  organizationId: string | null
  subjectId: string
  data: Record<string, unknown>
}
export type Emit = (event: NewEvent) => void

/**
 * Runs `work` in one transaction; the events it emits are written to the outbox in that same
 * transaction, so an event exists if and only if its change was committed.
 */
export function withTx<T>(work: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const pending: NewEvent[] = []
    const result = await work(tx, (event) => void pending.push(event))
    if (pending.length > 0) await tx.insert(events).values(pending)
    return result
  })
}
