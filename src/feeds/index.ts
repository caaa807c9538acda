// The feeds feature: import runs of product and offer feeds (uploads, server paths, schedules),
// read by the adapters in adapters/, cut into chunks and written through the catalog.
import { defineFeature } from '../runtime/feature'
import { chunkQueue, deadChunkQueue, deadImportQueue, importQueue, scheduledImportQueue } from './queues'
import { feedRoutes, offerRoutes } from './routes'
import { chunkWorker, deadChunkWorker, deadImportWorker, importWorker, scheduledWorker } from './workers'

export { createRun, getRun } from './runs'

export const feeds = defineFeature({
  name: 'feeds',
  routes: [feedRoutes, offerRoutes],
  queues: [importQueue, chunkQueue, scheduledImportQueue, deadChunkQueue, deadImportQueue],
  workers: [importWorker, chunkWorker, scheduledWorker, deadChunkWorker, deadImportWorker],
})
