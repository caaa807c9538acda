import type { PgBoss, Queue, WorkHandler } from 'pg-boss'
import * as barcodeBatch from './barcode-batch'
import * as catalogPromote from './catalog-promote'

/** One module per queue (file name = queue name). */
export type JobModule = {
  name: string
  options?: Omit<Queue, 'name'>
  handle: WorkHandler<any>
}

export const JOBS: JobModule[] = [catalogPromote, barcodeBatch]

/** Every process creates the queues it may send to (idempotent). */
export async function createQueues(boss: PgBoss): Promise<void> {
  for (const job of JOBS) await boss.createQueue(job.name, job.options)
}

export async function startWorkers(boss: PgBoss): Promise<void> {
  for (const job of JOBS) await boss.work(job.name, job.handle)
}
