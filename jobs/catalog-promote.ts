import type { Job } from 'pg-boss'
import { promoteProduct } from '../src/catalog/promotion'
import { promoteQueue } from '../src/catalog/queues'
import { transaction } from '../src/db/tx'
import type { Binding } from './binding'

export const catalogPromote: Binding = {
  queue: promoteQueue,
  handle: async (jobs: Job<{ productId: string }>[]) => {
    for (const job of jobs) await transaction((tx) => promoteProduct(tx, job.data.productId))
  },
}
