import { logger } from '../shared/logger'
import type { FeedSpec } from './adapters'
import type { ReadBroke, ReadChunk, ReadRequest } from './read-protocol'

/**
 * The process's feed reader: one Bun Worker, started with the first file and kept (unreferenced, so
 * it never holds the process open), reading every file the process splits. A thread that dies fails
 * the reads in progress (their import jobs are retried) and the next read starts another.
 */
let thread: Worker | null = null
let lastId = 0
/** reads in progress, and the one answer each waits for */
let reading = 0
const waiting = new Map<number, { resolve: (chunk: ReadChunk) => void; reject: (err: Error) => void }>()

/**
 * Forgets a thread that stopped and fails the reads waiting on it; the details (a message, a source
 * excerpt with paths) go to the log, never into a run's reason.
 */
function drop(stopped: Worker, why: string, detail?: string) {
  if (thread !== stopped) return
  thread = null
  logger.error({ reads: reading, detail }, `the feed reader's thread stopped (${why}); the reads on it are retried`)
  for (const waiter of waiting.values()) waiter.reject(new Error("the feed reader's thread stopped"))
  waiting.clear()
}

function reader(): Worker {
  if (thread) return thread
  const started = new Worker(new URL('./read-thread.ts', import.meta.url).href)
  // Bun's Worker has unref (the DOM type this project checks against does not)
  ;(started as unknown as { unref(): void }).unref()
  started.onmessage = (event: MessageEvent<ReadChunk | ReadBroke>) => {
    const answer = event.data
    const waiter = waiting.get(answer.id)
    waiting.delete(answer.id)
    if ('broke' in answer) {
      logger.error({ detail: answer.broke }, 'a feed read failed on the reader thread; it is retried')
      waiter?.reject(new Error('the feed reader failed'))
    } else waiter?.resolve(answer)
  }
  started.addEventListener('error', (event) => drop(started, 'an error', (event as ErrorEvent).message))
  started.addEventListener('close', () => drop(started, 'closed'))
  thread = started
  return started
}

/** Stops the reader's thread (a test's crash; a process exits without it): reads in progress fail. */
export function stopReader() {
  const stopping = thread
  if (!stopping) return
  stopping.terminate()
  drop(stopping, 'stopped')
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
  reading++
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
    reading--
    if (!done && thread === worker) worker.postMessage({ type: 'close', id } satisfies ReadRequest)
  }
}
