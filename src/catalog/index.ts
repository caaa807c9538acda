// The catalog feature: products, their candidates from every source, claims, prefixes and recalls.
// Other features write source records through writeSourceRecords and read products through these.
import { defineFeature } from '../runtime/feature'
import { promoteQueue, verifyQueue } from './queues'
import { recallRoutes } from './recall-routes'
import { catalogRoutes } from './routes'
import { promoteWorker, verifyWorker } from './workers'

export { expandUpcE, normalizeGtin, parseGtin, rangeProblem, readGtin } from './gtin'
export { registerPrefixes } from './prefixes'
export { promoteProducts } from './promotion'
export { gtinsOf, productIdOf } from './resource'
export { writeSourceRecords } from './source-writes'

export const catalog = defineFeature({
  name: 'catalog',
  routes: [catalogRoutes, recallRoutes],
  queues: [promoteQueue, verifyQueue],
  workers: [promoteWorker, verifyWorker],
})
