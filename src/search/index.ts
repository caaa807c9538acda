// What the search feature offers the rest of the service: keeping its documents in step with the
// catalog (`marks.ts`), and rebuilding them all (`reindex.ts`). Search itself is `search.ts`.
import { defineFeature } from '../runtime/feature'
import { searchIndexQueue } from './queues'
import { searchRoutes } from './routes'
import { indexWorker } from './workers'

export {
  drainBulkMarksNow,
  drainSearchMarks,
  markSearchDocuments,
  pendingSearchDocuments,
  refreshSearchDocuments,
} from './marks'
export { searchIndexQueue } from './queues'
export { reindexAll } from './reindex'

export const search = defineFeature({
  name: 'search',
  routes: [searchRoutes],
  queues: [searchIndexQueue],
  workers: [indexWorker],
})
