// What the split and the feed reader's thread say to each other (read-chunks.ts, read-thread.ts).
// Types and one constant only: the thread imports this, and nothing of the service's runtime with it.
import type { RejectedRow } from '../db/schema/feeds'
import type { FeedSpec } from './adapters'

/** Rejected rows of a chunk kept as its sample (the rest are counted). */
export const SAMPLE_PER_CHUNK = 20

/** One chunk of a file as the reader's thread hands it over. */
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

/** The thread's answer to a `next` when something other than the file failed: the read is retried. */
export type ReadBroke = { id: number; broke: string }

export type ReadRequest =
  | { type: 'open'; id: number; spec: FeedSpec; chunkRows: number }
  | { type: 'next'; id: number }
  | { type: 'close'; id: number }
