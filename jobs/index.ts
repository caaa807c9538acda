import type { PgBoss } from 'pg-boss'
import { createQueue } from '../src/db/queues'
import { performanceImport, revenueShares } from './advertising'
import { barcodeBatch, barcodeExpire } from './barcode-batch'
import { type Binding, bind } from './binding'
import { catalogPromote, catalogVerify } from './catalog-promote'
import { consumerBindings, eventsDispatch } from './events'
import { feedsChunk, feedsDeadChunk, feedsDeadImport, feedsImport, feedsScheduled } from './feeds'
import { idempotencySweep } from './observability'
import '../src/resolver/index-events' // the resolver index consumer is bound with the other consumers
import { searchIndex } from './search-index'
import { webhookDeliver } from './webhook-deliver'

/**
 * Binds handlers to the queues the features declare (src/<feature>/queues.ts and event consumers).
 * Nothing in src/ imports this folder; the process entry (main.ts) and tests do.
 */
const bindings = (): Binding[] => [
  catalogPromote,
  catalogVerify,
  barcodeBatch,
  barcodeExpire,
  eventsDispatch,
  searchIndex,
  feedsImport,
  feedsChunk,
  feedsDeadChunk,
  feedsDeadImport,
  feedsScheduled,
  performanceImport,
  revenueShares,
  idempotencySweep,
  ...consumerBindings(),
]

/** Every process creates the queues it may send to (idempotent), dead-letter queues first. */
export async function createQueues(): Promise<void> {
  for (const { queue } of bindings()) await createQueue(queue)
}

/** Starts every worker; the returned function stops the webhook dispatcher (pg-boss stops its own workers). */
export async function startWorkers(boss: PgBoss): Promise<() => Promise<void>> {
  for (const binding of bindings()) await bind(boss, binding)
  const stops = [webhookDeliver.start()]
  return async () => {
    await Promise.all(stops.map((stop) => stop()))
  }
}
