import type { RejectedRow } from '../db/schema'
import { logger } from '../shared/logger'
import type { FeedSpec } from './adapters'

/** Rejected rows of a chunk kept as its sample (the rest are counted). */
export const SAMPLE_PER_CHUNK = 20

/** One chunk of a file as the reader's thread hands it over (read-thread.ts). */
export type ReadChunk = {
  id: number
  /** the chunk's records, each with its line, as the JSON of the chunk's payload */
  payload: string
  /** rows read (records and rejected rows) */
  read: number
  rejected: number
  /** the first SAMPLE_PER_CHUNK rejected rows */
  sample: RejectedRow[]
  /** the file's bytes read so far */
  bytes: number
  /** the file's last chunk (possibly empty) */
  done: boolean
  /** why the read broke off after this chunk's rows, in words (read-failure.ts) */
  error?: string
}

export type ReadRequest =
  | { type: 'open'; id: number; spec: FeedSpec; chunkRows: number }
  | { type: 'next'; id: number }
  | { type: 'close'; id: number }

/**
 * The process's feed reader: one Bun Worker, started with the first file and kept (unreferenced, so
 * it never holds the process open), reading every file the process splits. A thread that dies fails
 * the reads in progress (their import jobs are retried) and the next read starts another.
 */
let thread: Worker | null = null
let lastId = 0
const waiting = new Map<number, { resolve: (chunk: ReadChunk) => void; reject: (err: Error) => void }>()

function reader(): Worker {
  if (thread) return thread
  const started = new Worker(new URL('./read-thread.ts', import.meta.url).href)
  // Bun's Worker has unref (the DOM type this project checks against does not)
  ;(started as unknown as { unref(): void }).unref()
  started.onmessage = (event: MessageEvent<ReadChunk | { id: number; broke: string }>) => {
    const answer = event.data
    const waiter = waiting.get(answer.id)
    waiting.delete(answer.id)
    if ('broke' in answer) waiter?.reject(new Error(`the feed reader failed: ${answer.broke}`))
    else waiter?.resolve(answer)
  }
  const lost = (why: string) => {
    if (thread !== started) return
    thread = null
    logger.error({ reads: waiting.size }, `the feed reader's thread stopped (${why}); its reads are retried`)
    for (const waiter of waiting.values()) waiter.reject(new Error(`the feed reader's thread stopped (${why})`))
    waiting.clear()
  }
  started.addEventListener('error', (event) => lost((event as ErrorEvent).message || 'an error'))
  started.addEventListener('close', () => lost('closed'))
  thread = started
  return started
}

/** Stops the reader's thread (a test's crash; a process exits without it): reads in progress fail. */
export function stopReader() {
  thread?.terminate()
}

/**
 * A feed file's rows in chunks of `chunkRows`, read on the reader's thread one chunk ahead of the
 * caller. The last chunk says `done`; a read that broke says why in its `error` (the rows before the
 * break are in the chunks before it and in it). Leaving the loop early stops the read.
 */
export async function* readChunks(spec: FeedSpec, chunkRows: number): AsyncGenerator<ReadChunk> {
  const worker = reader()
  const id = ++lastId
  worker.postMessage({ type: 'open', id, spec, chunkRows } satisfies ReadRequest)
  let done = false
  try {
    while (!done) {
      if (thread !== worker) throw new Error("the feed reader's thread stopped; the read is retried")
      const chunk = await new Promise<ReadChunk>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        worker.postMessage({ type: 'next', id } satisfies ReadRequest)
      })
      done = chunk.done
      yield chunk
    }
  } finally {
    if (!done && thread === worker) worker.postMessage({ type: 'close', id } satisfies ReadRequest)
  }
}
