import { defineQueue } from '../db/queues'

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
