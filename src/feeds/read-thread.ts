// The feed reader's thread (a Bun Worker started by read-chunks.ts): reads feed files through their
// adapters and hands each file over one chunk at a time, its records already as the chunk's payload
// JSON, reading the next chunk while the previous one is stored. What it runs is the file's whole
// read (gunzip, lines, parsing, the adapters: 11-16 µs a row), so that the server's main thread, which
// bounds an import (it was runnable 91 % of a 300,000-row import while a fifth of the two cores sat
// idle), keeps only the chunks' writing. It imports the adapters and nothing of the service's runtime.

import { sampleOf } from '../shared/text-records'
import { type FeedSpec, readFeed } from './adapters'
import type { FeedRow } from './adapters/record'
import { readFailure, storable } from './read-failure'
import { type ReadBroke, type ReadChunk, type ReadRequest, SAMPLE_PER_CHUNK } from './read-protocol'

declare const self: Worker

/** The next chunk read ahead, settled either way: a rejection left unhandled would end the thread. */
type Ahead = { chunk: ReadChunk } | { broke: string }

/** A file being read: the next chunk (read ahead), how to read the one after, how to stop. */
type Reading = { next: Promise<Ahead>; more: () => Promise<Ahead>; close: () => void }

const readings = new Map<number, Reading>()

/** A rejected row's reason kept in the sample is cut to this many characters. */
const REASON_CHARS = 500

/**
 * Payload characters and rows posted since the thread's heap was last collected, and how many of
 * either trigger it (a file of rejected rows posts rows with next to no payload).
 */
const since = { chars: 0, rows: 0 }
const COLLECT_AFTER = { chars: 2 * 1024 * 1024, rows: 5000 }

function open(id: number, spec: FeedSpec, chunkRows: number) {
  let bytes = 0
  const rows = readFeed(spec, (n) => {
    bytes += n
  })[Symbol.asyncIterator]()
  let finished = false
  /** The next chunk of up to `chunkRows` rows; the last one says `done` (and why, if the read broke). */
  const read = async (): Promise<ReadChunk> => {
    const records: unknown[] = []
    const sample: ReadChunk['sample'] = []
    let count = 0
    let rejected = 0
    let error: string | undefined
    while (!finished && count < chunkRows) {
      let next: IteratorResult<FeedRow>
      try {
        next = await rows.next()
      } catch (err) {
        finished = true
        error = readFailure(err)
        break
      }
      if (next.done) {
        finished = true
        break
      }
      const row = next.value
      count++
      if ('record' in row) records.push({ ...row.record, line: row.line })
      else if (rejected++ < SAMPLE_PER_CHUNK)
        // a reason may quote the row's value (a field of up to a MiB): cut like its input
        sample.push({
          line: row.line,
          reason: storable(sampleOf(row.rejected, REASON_CHARS)),
          input: storable(row.input),
        })
    }
    return { id, payload: JSON.stringify(records), read: count, rejected, sample, bytes, done: finished, error }
  }
  const more = () =>
    read().then(
      (chunk): Ahead => ({ chunk }),
      (err): Ahead => ({ broke: err instanceof Error ? err.message : String(err) }),
    )
  readings.set(id, {
    close: () => {
      finished = true
      // the file's stream is closed with its iterator
      void rows.return?.(undefined).catch(() => {})
    },
    next: more(),
    more,
  })
}

async function answer(request: ReadRequest) {
  if (request.type === 'open') return open(request.id, request.spec, request.chunkRows)
  const reading = readings.get(request.id)
  if (!reading) {
    if (request.type === 'next') self.postMessage({ id: request.id, broke: 'no such read' } satisfies ReadBroke)
    return
  }
  if (request.type === 'close') {
    readings.delete(request.id)
    return reading.close()
  }
  const ahead = await reading.next
  if ('broke' in ahead) {
    // not the file's fault (a read's failure is a chunk's `error`): this read stops, and is retried
    readings.delete(request.id)
    reading.close()
    self.postMessage({ id: request.id, broke: ahead.broke } satisfies ReadBroke)
    return
  }
  self.postMessage(ahead.chunk)
  if (ahead.chunk.done) readings.delete(request.id)
  else reading.next = reading.more()
  // a chunk's rows are garbage once posted: collected on this thread every couple of chunks of the
  // default 2,500 rows (about 0.6-1.5 M characters of payload each), so that its heap stays near a
  // few chunks; left to the concurrent collector, a million-row import's peak RSS rose by 120 MB.
  // Collecting after every chunk made files of small chunks pay a whole collection for each (a
  // run of 10-row chunks waited on 1,000 collections), and every read on the thread waited with it.
  since.chars += ahead.chunk.payload.length
  since.rows += ahead.chunk.read
  if (since.chars >= COLLECT_AFTER.chars || since.rows >= COLLECT_AFTER.rows) {
    since.chars = 0
    since.rows = 0
    Bun.gc(true)
  }
}

self.onmessage = (event: MessageEvent<ReadRequest>) => {
  answer(event.data).catch((err) => {
    // whatever else fails here fails that read alone, never the thread with every other read on it
    readings.get(event.data.id)?.close()
    readings.delete(event.data.id)
    self.postMessage({ id: event.data.id, broke: err instanceof Error ? err.message : String(err) } satisfies ReadBroke)
  })
}
