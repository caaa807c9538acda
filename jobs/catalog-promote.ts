import type { Job } from 'pg-boss'
import { promoteProduct } from '../src/catalog/promotion'
import { promoteQueue, verifyQueue } from '../src/catalog/queues'
import { applyPrefixSignal } from '../src/catalog/verification'
import { transaction } from '../src/db/tx'
import type { Binding } from './binding'

export const catalogPromote: Binding = {
  queue: promoteQueue,
  handle: async (jobs: Job<{ productId: string }>[]) => {
    for (const job of jobs) await transaction((tx) => promoteProduct(tx, job.data.productId))
  },
}

export const catalogVerify: Binding = {
  queue: verifyQueue,
  handle: async (jobs: Job<{ productId: string; organizationId: string }>[]) => {
    for (const job of jobs)
      await transaction((tx) => applyPrefixSignal(tx, job.data.productId, job.data.organizationId))
  },
}
