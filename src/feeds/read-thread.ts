// The feed reader's thread (a Bun Worker started by read-chunks.ts): reads feed files through their
// adapters and hands each file over one chunk at a time, its records already as the chunk's payload
// JSON, reading the next chunk while the previous one is stored. What it runs is the file's whole
// read (gunzip, lines, parsing, the adapters: 11-16 µs a row), so that the server's main thread, which
// bounds an import (it was runnable 91 % of a 300,000-row import while a fifth of the two cores sat
// idle), keeps only the chunks' writing.
import { type FeedSpec, readFeed } from './adapters'
import type { FeedRow } from './adapters/record'
import { type ReadChunk, type ReadRequest, SAMPLE_PER_CHUNK } from './read-chunks'
import { readFailure, storable } from './read-failure'

declare const self: Worker

/** A file being read: the next chunk (read ahead), how to read the one after, how to stop. */
type Reading = { next: Promise<ReadChunk>; more: () => Promise<ReadChunk>; close: () => void }

const readings = new Map<number, Reading>()

function open(id: number, spec: FeedSpec, chunkRows: number) {
  let bytes = 0
  const rows = readFeed(spec, (n) => {
    bytes += n
  })[Symbol.asyncIterator]()
  let finished = false
  /** The next chunk of up to `chunkRows` rows; the last one says `done` (and why, if the read broke). */
  const more = async (): Promise<ReadChunk> => {
    const records: unknown[] = []
    const sample: ReadChunk['sample'] = []
    let read = 0
    let rejected = 0
    let error: string | undefined
    while (!finished && read < chunkRows) {
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
      read++
      if ('record' in row) records.push({ ...row.record, line: row.line })
      else if (rejected++ < SAMPLE_PER_CHUNK)
        sample.push({ line: row.line, reason: storable(row.rejected), input: storable(row.input) })
    }
    return { id, payload: JSON.stringify(records), read, rejected, sample, bytes, done: finished, error }
  }
  readings.set(id, {
    close: () => {
      finished = true
      void rows.return?.(undefined)
    },
    next: more(),
    more,
  })
}

self.onmessage = async (event: MessageEvent<ReadRequest>) => {
  const request = event.data
  if (request.type === 'open') return open(request.id, request.spec, request.chunkRows)
  const reading = readings.get(request.id)
  if (!reading) return
  if (request.type === 'close') {
    readings.delete(request.id)
    return reading.close()
  }
  let chunk: ReadChunk
  try {
    chunk = await reading.next
  } catch (err) {
    // not the file's fault (a read's failure is a chunk's `error`): the read is retried
    readings.delete(request.id)
    self.postMessage({ id: request.id, broke: err instanceof Error ? err.message : String(err) })
    return
  }
  self.postMessage(chunk)
  if (chunk.done) readings.delete(request.id)
  else reading.next = reading.more()
  // a chunk's rows are garbage once posted: collected now, on this thread (a few ms a chunk of
  // 2,500 rows), so that its heap stays near a chunk or two; left to the concurrent collector, a
  // million-row import's peak RSS rose by 120 MB
  Bun.gc(true)
}
