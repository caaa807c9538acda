import { deadLettersOf, defineQueue } from '../db/queues'
import type { ScheduledImport } from './schedules'

/** Reads a run's file and cuts it into chunks, each sent as a `feeds.chunk` job (resumable). */
export const importQueue = defineQueue<{ runId: string }>('feeds.import', {
  retryLimit: 5,
  retryBackoff: true,
  heartbeatSeconds: 10,
})

/**
 * Writes one chunk of a run (idempotent by run and chunk). A record that cannot be written is
 * rejected on its own (chunks.ts), so a chunk fails as a whole only for reasons outside its records
 * (the database, the worker): three attempts, then the run fails with the reason.
 */
export const chunkQueue = defineQueue<{ runId: string; chunk: number }>('feeds.chunk', {
  retryLimit: 2,
  retryBackoff: true,
  heartbeatSeconds: 10,
})

/** One firing of a scheduled import (FEED_SCHEDULE_FILE): the entry is the job's data. */
export const scheduledImportQueue = defineQueue<ScheduledImport>('feeds.scheduled', {
  retryLimit: 2,
  retryBackoff: true,
})

/** Chunks and imports whose attempts were all spent, the worker killed on each included: their runs fail. */
export const deadChunkQueue = deadLettersOf(chunkQueue)
export const deadImportQueue = deadLettersOf(importQueue)
