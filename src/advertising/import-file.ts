import type { Readable } from 'node:stream'
import type { RejectedPerformanceRow } from '../db/schema'
import { invalidField } from '../shared/errors'
import { parseId } from '../shared/ids'
import { DEFAULT_INFLATE_LIMITS, gunzipBounded, gunzipHead, type InflateLimits, isGzip } from '../shared/inflate'
import { csvRows, sampleOf, textRecords } from '../shared/text-records'
import { isCalendarDate } from './campaigns'
import type { PerformanceInput } from './performance'

export type ImportFormat = 'csv' | 'jsonl'
export const COLUMNS = ['campaign_id', 'date', 'impressions', 'clicks', 'spend'] as const
/**
 * How far an upload may decompress: a 20 MiB gzip of CSV rows is about 100 MiB; past 128 MiB, or
 * past 100:1, the import fails (a decompression bomb).
 */
const LIMITS: InflateLimits = { ...DEFAULT_INFLATE_LIMITS, maxBytes: 128 * 1024 * 1024 }

const COUNT = /^[0-9]{1,13}$/
const MONEY = /^[0-9]{1,14}(\.[0-9]{1,6})?$/
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/
const SOURCE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/

/** The stored upload's bytes as text bytes: gunzipped, within LIMITS, when it is gzip. */
export function decompressed(raw: Readable, first: Uint8Array): Readable {
  return isGzip(first) ? gunzipBounded(raw, LIMITS) : raw
}

/** The start of the upload as text, read cheaply (a bomb's head is refused later by the job). */
function head(bytes: Buffer): string {
  const start = isGzip(bytes) ? gunzipHead(bytes) : bytes.subarray(0, 16_384)
  return start.toString('utf8').replace(/^\uFEFF/, '')
}

/**
 * The upload's format from its first bytes (`bytes`; `size` is the whole's): as given, else from
 * the content type, else from its first character; a CSV must have the required columns (422 at
 * once, before a job is queued).
 */
export function checkUpload(bytes: Buffer, size: number, contentType: string, format?: ImportFormat): ImportFormat {
  if (size === 0) throw invalidField('body', 'the uploaded file is empty')
  let start: string
  try {
    start = head(bytes)
  } catch {
    throw invalidField('body', 'is not valid gzip')
  }
  const chosen =
    format ??
    (contentType === 'text/csv'
      ? 'csv'
      : contentType === 'application/x-ndjson' || contentType === 'application/jsonl'
        ? 'jsonl'
        : start.trimStart().startsWith('{')
          ? 'jsonl'
          : 'csv')
  if (chosen === 'csv') {
    const header = (start.split(/\r?\n/, 1)[0] ?? '').split(',').map((c) => c.trim().replace(/^"|"$/g, ''))
    const missing = COLUMNS.filter((c) => !header.includes(c))
    if (missing.length)
      throw invalidField(
        'body',
        `the CSV header lacks ${missing.join(', ')} (columns: ${COLUMNS.join(', ')}[, source])`,
      )
  }
  return chosen
}

export type ParsedRow = { row: number; input: string; value?: PerformanceInput; reason?: string }

const field = (record: Record<string, unknown>, name: string) => {
  const value = record[name]
  return typeof value === 'string' ? value.trim() : value
}

/**
 * Checks records one by one; a file names few campaigns and days many times, so their parsed
 * forms are remembered (decoding a shortuuid costs more than the rest of the row).
 */
function recordChecker(defaultSource: string) {
  const ids = new Map<string, string | null>()
  const dates = new Map<string, boolean>()
  const idOf = (raw: string) => {
    if (!ids.has(raw)) ids.set(raw, parseId(raw))
    return ids.get(raw)!
  }
  const dateOk = (raw: string) => {
    if (!dates.has(raw)) dates.set(raw, DATE.test(raw) && isCalendarDate(raw))
    return dates.get(raw)!
  }
  /** One record checked: a row to write, or the reason it is refused. */
  return (record: Record<string, unknown>): PerformanceInput | string => {
    const id = field(record, 'campaign_id')
    const campaignId = typeof id === 'string' ? idOf(id) : null
    if (!campaignId) return 'campaign_id must be a shortuuid or UUID'
    const date = field(record, 'date')
    if (typeof date !== 'string' || !dateOk(date)) return 'date must be a date YYYY-MM-DD'
    const counts: number[] = []
    for (const name of ['impressions', 'clicks']) {
      const value = field(record, name)
      const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
      if (typeof text !== 'string' || !COUNT.test(text)) return `${name} must be a whole number from 0`
      counts.push(Number(text))
    }
    const spend = field(record, 'spend')
    if (typeof spend === 'number')
      return 'spend must be a decimal string such as "12.34" (a JSON number may be rounded)'
    if (typeof spend !== 'string' || !MONEY.test(spend))
      return 'spend must be a decimal such as 12.34 (at most 6 decimals)'
    const given = field(record, 'source')
    const source = given === undefined || given === null || given === '' ? defaultSource : given
    if (typeof source !== 'string' || !SOURCE.test(source))
      return 'source must be 1-64 letters, digits, ".", "_", ":" or "-"'
    return { campaignId, date, source, impressions: counts[0]!, clicks: counts[1]!, spend }
  }
}

// a sample of its own: a slice would keep the whole line alive while the chunk is kept
const shorten = (text: string) => (text.length > 200 ? `${sampleOf(text)}…` : text)

type RawRecord = { row: number; input: string; record: Record<string, unknown> | string }

/**
 * The file's records, numbered from 1 (data rows: blank lines and the CSV header are not
 * counted), read as they stream in; a line over 1 MiB or a row of more than 1,000 columns is a
 * refused record, read past without being held.
 */
async function* rawRecords(text: Readable, format: ImportFormat): AsyncGenerator<RawRecord> {
  let row = 0
  if (format === 'jsonl') {
    for await (const line of textRecords(text, { skipBlank: true })) {
      if (line.problem) {
        yield { row: ++row, input: line.text, record: line.problem }
        continue
      }
      const raw = line.text.replace(/^\uFEFF/, '')
      if (raw.trim() === '') continue
      let value: unknown
      try {
        value = JSON.parse(raw)
      } catch {
        yield { row: ++row, input: raw, record: 'the line is not valid JSON' }
        continue
      }
      const record =
        value && typeof value === 'object' && !Array.isArray(value) ? value : 'the line is not a JSON object'
      yield { row: ++row, input: raw, record: record as RawRecord['record'] }
    }
    return
  }
  for await (const read of csvRows(text)) {
    if (read.problem !== undefined) yield { row: ++row, input: read.input, record: read.problem }
    else yield { row: ++row, input: Object.values(read.row).join(','), record: read.row }
  }
}

/** Every data row of the file, checked (a repeated campaign, date and source is not looked at here). */
async function* checkedRows(text: Readable, format: ImportFormat, defaultSource: string): AsyncGenerator<ParsedRow> {
  const check = recordChecker(defaultSource)
  for await (const { row, input, record } of rawRecords(text, format)) {
    const checked = typeof record === 'string' ? record : check(record)
    yield typeof checked === 'string'
      ? { row, input: shorten(input), reason: checked }
      : { row, input: shorten(input), value: checked }
  }
}

/** The last row of each campaign, date and source, keyed by small numbers (a file may hold millions of rows). */
function rowKeys() {
  const campaigns = new Map<string, number>()
  const sources = new Map<string, number>()
  const intern = (names: Map<string, number>, name: string) => {
    const known = names.get(name)
    if (known !== undefined) return known
    names.set(name, names.size)
    return names.size - 1
  }
  return (v: PerformanceInput) => `${intern(campaigns, v.campaignId)}|${v.date}|${intern(sources, v.source)}`
}

export type ImportScan = { total: number; last: Map<string, number>; key: (v: PerformanceInput) => string }

/** The first of an import's two passes over the file: its row count and the last row of each campaign, date and source. */
export async function scanImport(text: Readable, format: ImportFormat, defaultSource: string): Promise<ImportScan> {
  const key = rowKeys()
  const last = new Map<string, number>()
  let total = 0
  for await (const r of checkedRows(text, format, defaultSource)) {
    total = r.row
    if (r.value) last.set(key(r.value), r.row)
  }
  return { total, last, key }
}

/**
 * The second pass: every data row of the file, numbered from 1, checked. When the file gives the
 * same campaign, date and source more than once, the last row wins and the earlier ones are
 * refused as superseded, so the outcome does not depend on how the rows are cut into chunks.
 */
export async function* parseImport(
  text: Readable,
  format: ImportFormat,
  defaultSource: string,
  scan: ImportScan,
): AsyncGenerator<ParsedRow> {
  for await (const r of checkedRows(text, format, defaultSource)) {
    const winner = r.value ? scan.last.get(scan.key(r.value)) : undefined
    if (r.value && winner !== r.row) {
      r.reason = `superseded by row ${winner} (same campaign, date and source)`
      delete r.value
    }
    yield r
  }
}

export type { RejectedPerformanceRow }
