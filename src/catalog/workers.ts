import { transaction } from '../db/tx'
import { bind } from '../runtime/workers'
import { promoteProduct } from './promotion'
import { promoteQueue, verifyQueue } from './queues'
import { applyPrefixSignal } from './verification'

export const promoteWorker = bind(promoteQueue, async (jobs) => {
  for (const job of jobs) await transaction((tx) => promoteProduct(tx, job.data.productId))
})

export const verifyWorker = bind(verifyQueue, async (jobs) => {
  for (const job of jobs) await transaction((tx) => applyPrefixSignal(tx, job.data.productId, job.data.organizationId))
})
