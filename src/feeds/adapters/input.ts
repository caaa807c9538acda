import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { DEFAULT_INFLATE_LIMITS, gunzipBounded, type InflateLimits, isGzip } from '../../shared/inflate'
import {
  type CsvOptions,
  type CsvRow,
  guessDelimiter,
  InputLimitError,
  csvRows as readCsvRows,
  splitFields,
  type TextRecord,
  textRecords,
} from '../../shared/text-records'

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
  // closed whatever the read does (a folder opens, then fails to read: EISDIR): a handle left to the
  // collector ends the process (Bun throws ERR_INVALID_STATE from the collection)
  try {
    await handle.read(head, 0, 2, 0)
  } finally {
    await handle.close()
  }
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

/** The columns that identify a row, per format: a header with none of them is not that feed. */
const IDENTIFYING: Partial<Record<string, readonly string[]>> = {
  off_csv: ['code'],
  merchant_csv: ['gtin', 'id'],
  usda_csv: ['fdc_id', 'gtin_upc'],
}

/**
 * Why the first bytes of a feed (decompressed) are not a file of `format` ("is not …: expected …,
 * found …"), or null when they may be: binary or non-UTF-8 bytes, a JSONL whose first line is not an object, a header with none of
 * the identifying columns (`mapping` renames a merchant's). Only what the head shows is judged: a
 * first line longer than the head is left to the reading. Without this, such a file "succeeded"
 * with nothing read, or with every row rejected.
 */
export function headRefusal(
  format: string,
  head: Uint8Array,
  { mapping, whole = false }: { mapping?: Record<string, string>; whole?: boolean } = {},
): string | null {
  if (head.length === 0) return null
  // a stray NUL or control byte in a value is that row's problem (a rejected row); many are a binary file
  let control = 0
  for (const b of head) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) control++
  if (control > Math.max(8, head.length / 100))
    return `is not ${describe(format)}: expected text, found binary bytes (${control} control bytes in its first ${head.length})`
  let text: string
  try {
    // stream: a character cut by the head's end is not an error
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true }).replace(/^\uFEFF/, '')
  } catch {
    return `is not ${describe(format)}: expected UTF-8 text, found bytes that are not UTF-8`
  }
  const lines = text.split('\n')
  // the last line may go on past the head, unless the head is the whole file
  const complete = whole ? lines : lines.slice(0, -1)
  const first = complete.find((l) => l.trim() !== '')?.replace(/\r$/, '')
  if (first === undefined) return null
  if (format === 'off_jsonl') {
    let value: unknown
    try {
      value = JSON.parse(first)
    } catch {
      return `is not ${describe(format)}: expected a JSON object on each line, found a first line that is not JSON: ${quote(first)}`
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return `is not ${describe(format)}: expected a JSON object on each line, found a first line that is ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`
    return null
  }
  const wanted = IDENTIFYING[format]?.map((c) => mapping?.[c] ?? c)
  if (!wanted) return null
  const delimiter = format === 'off_csv' ? '\t' : guessDelimiter(complete.slice(0, 10).join('\n'), true)
  const columns = (splitFields(first, delimiter, format !== 'off_csv') ?? []).map((c) => c.trim())
  if (wanted.some((c) => columns.includes(c))) return null
  return `is not ${describe(format)}: expected a header with ${wanted.map((c) => `"${c}"`).join(' or ')}, found the columns ${quote(columns.slice(0, 8).join(', '))}${columns.length > 8 ? ', …' : ''}`
}

const describe = (format: string) =>
  ({
    off_jsonl: 'an Open Food Facts JSONL dump',
    off_csv: 'an Open Food Facts tab-separated export',
    usda_json: 'a USDA FoodData Central JSON download',
    usda_csv: 'a USDA FoodData Central CSV file',
    merchant_csv: 'a merchant CSV/TSV feed',
  })[format] ?? format

const quote = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s)

/** The first `bytes` of a feed file, decompressed when it is gzip (to judge it before it is read). */
export async function readHead(path: string, bytes = 64 * 1024, limits?: InflateLimits): Promise<Buffer> {
  const stream = await openInput(path, undefined, limits)
  const parts: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of stream) {
      parts.push(chunk as Buffer)
      size += (chunk as Buffer).length
      if (size >= bytes) break
    }
  } finally {
    stream.destroy()
  }
  return Buffer.concat(parts).subarray(0, bytes)
}
