// The barcodes feature: single barcodes and batch exports (label sheets, zip files).
import { defineFeature } from '../runtime/feature'
import { batchQueue, expireQueue } from './queues'
import { barcodeRoutes } from './routes'
import { expireWorker, renderWorker } from './workers'

export { renderBatch } from './batch-render'
export { itemsFromCsv } from './batches'

export const barcodes = defineFeature({
  name: 'barcodes',
  routes: [barcodeRoutes],
  queues: [batchQueue, expireQueue],
  workers: [renderWorker, expireWorker],
})
