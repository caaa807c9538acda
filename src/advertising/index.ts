// The advertising feature: campaigns, their performance rows (posted or imported) and the monthly
// revenue shares of retailers.
import { defineFeature } from '../runtime/feature'
import { campaignRoutes } from './campaign-routes'
import { performanceImportQueue, revenueShareQueue } from './queues'
import { reportCache } from './report-cache'
import { revenueShareRoutes } from './share-routes'
import { importWorker, sharesWorker } from './workers'

export { calculateRevenueShares, previousPeriod, requestCalculation } from './revenue-shares'

export const advertising = defineFeature({
  name: 'advertising',
  routes: [campaignRoutes, revenueShareRoutes],
  queues: [performanceImportQueue, revenueShareQueue],
  workers: [importWorker, sharesWorker],
  // cached reports are dropped in every process when a write anywhere changes them
  start: async () => {
    await reportCache.listen()
  },
})
