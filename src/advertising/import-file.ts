import { gunzipSync, constants as zlibConstants } from 'node:zlib'
import Papa from 'papaparse'
import type { RejectedPerformanceRow } from '../db/schema'
import { invalidField } from '../shared/errors'
import { parseId } from '../shared/ids'
import { isCalendarDate } from './campaigns'
import type { PerformanceInput } from './performance'

export type ImportFormat = 'csv' | 'jsonl'
export const COLUMNS = ['campaign_id', 'date', 'impressions', 'clicks', 'spend'] as const
/** Decompressed size an upload may reach (a 20 MiB gzip of CSV rows is about 100 MiB). */
const MAX_TEXT = 256 * 1024 * 1024

const COUNT = /^[0-9]{1,13}$/
const MONEY = /^[0-9]{1,14}(\.[0-9]{1,6})?$/
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/
const SOURCE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/

const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b

/** The upload as text (gunzipped when it is gzip), without a byte-order mark. */
export function uploadText(bytes: Buffer): string {
  const raw = isGzip(bytes) ? gunzipSync(bytes, { maxOutputLength: MAX_TEXT }) : bytes
  return raw.toString('utf8').replace(/^\uFEFF/, '')
}

/** The start of the upload as text, read cheaply (a gzip stream's start decompresses on its own). */
function head(bytes: Buffer): string {
  const start = isGzip(bytes)
    ? gunzipSync(bytes.subarray(0, 16_384), { finishFlush: zlibConstants.Z_SYNC_FLUSH })
    : bytes.subarray(0, 16_384)
  return start.toString('utf8').replace(/^\uFEFF/, '')
}

/**
 * The upload's format: as given, else from the content type, else from its first character;
 * a CSV must have the required columns (422 at once, before a job is queued).
 */
export function checkUpload(bytes: Buffer, contentType: string, format?: ImportFormat): ImportFormat {
  if (bytes.length === 0) throw invalidField('body', 'the uploaded file is empty')
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

const shorten = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text)

function records(text: string, format: ImportFormat): { input: string; record: Record<string, unknown> | string }[] {
  if (format === 'jsonl')
    return text
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          const value = JSON.parse(line)
          return {
            input: line,
            record:
              value && typeof value === 'object' && !Array.isArray(value) ? value : 'the line is not a JSON object',
          }
        } catch {
          return { input: line, record: 'the line is not valid JSON' }
        }
      })
  const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: 'greedy' })
  return parsed.data.map((record) => ({ input: Object.values(record).join(','), record }))
}

/**
 * Every data row of the file, numbered from 1, checked. When the file gives the same campaign,
 * date and source more than once, the last row wins and the earlier ones are refused as superseded,
 * so the outcome does not depend on how the rows are cut into chunks.
 */
export function parseImport(text: string, format: ImportFormat, defaultSource: string): ParsedRow[] {
  const check = recordChecker(defaultSource)
  const rows = records(text, format).map(({ input, record }, i): ParsedRow => {
    const checked = typeof record === 'string' ? record : check(record)
    return typeof checked === 'string'
      ? { row: i + 1, input: shorten(input), reason: checked }
      : { row: i + 1, input: shorten(input), value: checked }
  })
  const last = new Map<string, number>()
  for (const r of rows) if (r.value) last.set(`${r.value.campaignId}|${r.value.date}|${r.value.source}`, r.row)
  for (const r of rows) {
    if (!r.value) continue
    const winner = last.get(`${r.value.campaignId}|${r.value.date}|${r.value.source}`)!
    if (winner !== r.row) {
      r.reason = `superseded by row ${winner} (same campaign, date and source)`
      delete r.value
    }
  }
  return rows
}

export type { RejectedPerformanceRow }
