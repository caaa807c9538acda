import { defineQueue } from '../db/queues'
import type { ScheduledImport } from './schedules'

/** Reads a run's file and cuts it into chunks, each sent as a `feeds.chunk` job (resumable). */
export const importQueue = defineQueue<{ runId: string }>('feeds.import', {
  retryLimit: 5,
  retryBackoff: true,
  heartbeatSeconds: 10,
})

/** Writes one chunk of a run (idempotent by run and chunk). */
export const chunkQueue = defineQueue<{ runId: string; chunk: number }>('feeds.chunk', {
  retryLimit: 10,
  retryBackoff: true,
  heartbeatSeconds: 10,
})

/** One firing of a scheduled import (FEED_SCHEDULE_FILE): the entry is the job's data. */
export const scheduledImportQueue = defineQueue<ScheduledImport>('feeds.scheduled', {
  retryLimit: 2,
  retryBackoff: true,
})
