import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { DEFAULT_INFLATE_LIMITS, gunzipBounded, type InflateLimits, isGzip } from '../src/shared/inflate'
import {
  type CsvOptions,
  type CsvRow,
  InputLimitError,
  csvRows as readCsvRows,
  type TextRecord,
  textRecords,
} from '../src/shared/text-records'

export type { CsvOptions, CsvRow, InflateLimits }
export { DEFAULT_INFLATE_LIMITS, InputLimitError }

/**
 * The bytes of a feed file, decompressed when it is gzip (by its magic number, not its name),
 * within `limits` (a breach is an InputLimitError on the stream).
 */
export async function openInput(
  path: string,
  onBytes?: (n: number) => void,
  limits: InflateLimits = DEFAULT_INFLATE_LIMITS,
): Promise<Readable> {
  const handle = await open(path, 'r')
  const head = Buffer.alloc(2)
  await handle.read(head, 0, 2, 0)
  await handle.close()
  const raw = createReadStream(path)
  if (onBytes) raw.on('data', (chunk) => onBytes(chunk.length))
  return isGzip(head) ? gunzipBounded(raw, limits) : raw
}

/**
 * Lines of a UTF-8 stream, without line ends, numbered from 1 (blank ones counted, and left out
 * with `skipBlank`); a line over 1 MiB comes with a `problem` (and its start as `text`) instead of its text.
 */
export function lines(stream: Readable, { skipBlank = false } = {}): AsyncGenerator<TextRecord> {
  return textRecords(stream, { skipBlank })
}

/**
 * Rows of a CSV/TSV stream as objects keyed by the header (BOM removed, quoted newlines kept in
 * their field); `line` counts rows with the header as line 1. A row over 1 MiB or with more than
 * 1,000 fields comes with a `problem` instead of its row.
 */
export function csvRows(stream: Readable, options: CsvOptions = {}): AsyncGenerator<CsvRow> {
  return readCsvRows(stream, options)
}
