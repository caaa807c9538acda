import Papa from 'papaparse'

/**
 * Records of an uploaded text file (JSON lines, CSV, TSV), cut from its bytes in one pass. Uploads
 * come from tenants, so every record is bounded: a record longer than MAX_RECORD_BYTES is one
 * problem naming its line, read past without being held (never built as a string), and a CSV row
 * has at most MAX_COLUMNS fields. The cost is linear in the input whatever its shape (a 40 MB line
 * or a million columns cost what any 40 MB of rows cost).
 */
export const MAX_RECORD_BYTES = 1024 * 1024
export const MAX_COLUMNS = 1000
/** Longest a reader works before it lets the event loop take a turn (other requests, I/O). */
const TURN_MS = 4
/** Lets the event loop take a turn; the time it ends. */
const aTurn = () => new Promise<number>((done) => setImmediate(() => done(performance.now())))
/** Bytes of a refused record kept to show which one it was. */
const SAMPLE_BYTES = 200

const NL = 0x0a
const CR = 0x0d
const QUOTE = 0x22
const SPACE = 0x20
const TAB = 0x09

/**
 * The start of a text as a string of its own. A slice of a string keeps the whole string alive,
 * so a 200-character sample of a 1 MiB line would hold the megabyte for as long as the sample is
 * kept (a chunk keeps a thousand).
 */
export const sampleOf = (text: string, length = SAMPLE_BYTES) => Buffer.from(text.slice(0, length)).toString()
/** Fields of a record longer than this are copied out of it, so that no kept value holds the record. */
const OWN_FIELDS_AFTER = 4096

/** A file that breaks a limit as a whole (its header, its decompressed size): the run fails with this reason. */
export class InputLimitError extends Error {}

/** One record: its text, or why it was refused (`text` then holds its start, for the sample). */
export type TextRecord =
  | { line: number; text: string; problem?: undefined }
  | { line: number; text: string; problem: string }

export type RecordOptions = {
  /** CSV quoting: a newline inside a field quoted with `"` does not end the record; the delimiter (one byte) marks field starts */
  quotedBy?: string
  maxBytes?: number
  /** blank records are counted but not yielded (a file of newlines costs no more than a scan) */
  skipBlank?: boolean
}

const tooLong = (bytes: number, max: number) =>
  `the line is ${bytes > 10 * max ? 'over ' : ''}${Math.min(bytes, 10 * max)} bytes long; at most ${max} bytes are read as one line`

/**
 * The records of a byte stream, numbered from 1 (every newline counts, blank records included),
 * without line ends. With `quotedBy` (CSV), a quote opens a quoted field only at a field's start
 * (as Papa Parse reads it), so an inch mark inside a field is text.
 */
export async function* textRecords(
  source: AsyncIterable<Uint8Array>,
  { quotedBy, maxBytes = MAX_RECORD_BYTES, skipBlank = false }: RecordOptions = {},
): AsyncGenerator<TextRecord> {
  const delimiter = quotedBy === undefined ? -1 : quotedBy.charCodeAt(0)
  let parts: Buffer[] = []
  let size = 0
  let sample: Buffer | null = null
  let line = 0
  // CSV state, carried across chunks
  let inQuotes = false
  let afterQuote = false
  /** whether the last chunk ended at a field's start (a delimiter or newline; true before the first byte) */
  let fieldStart = true

  const take = (piece: Buffer) => {
    if (sample) {
      size += piece.length
      return
    }
    if (size + piece.length > maxBytes) {
      sample = Buffer.concat([...parts, piece.subarray(0, SAMPLE_BYTES)]).subarray(0, SAMPLE_BYTES)
      parts = []
      size += piece.length
      return
    }
    if (piece.length) parts.push(piece)
    size += piece.length
  }
  const end = (): TextRecord => {
    line++
    let record: TextRecord
    if (sample) record = { line, text: decode(sample), problem: tooLong(size, maxBytes) }
    else {
      const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
      const n = bytes.length && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length
      record = { line, text: decode(bytes.subarray(0, n)) }
    }
    parts = []
    size = 0
    sample = null
    return record
  }

  let turn = performance.now()
  for await (const raw of source) {
    // a stream with data ready resolves its reads as microtasks: without a pause now and then, a
    // file of many small records would keep the event loop from every request while it is read
    if (performance.now() - turn > TURN_MS) turn = await aTurn()
    const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    let start = 0
    if (delimiter === -1) {
      // no quoting: a newline always ends the record (found natively)
      for (let nl = chunk.indexOf(NL, start); nl !== -1; nl = chunk.indexOf(NL, start)) {
        // a blank line (or a lone CR) is counted without making anything: a file of newlines is a scan
        if (skipBlank && size === 0 && (nl === start || (nl === start + 1 && chunk[start] === CR))) {
          line++
          start = nl + 1
          continue
        }
        take(chunk.subarray(start, nl))
        start = nl + 1
        yield end()
        if (performance.now() - turn > TURN_MS) turn = await aTurn()
      }
    } else {
      // CSV: native searches for the next quote and newline; a quote opens a quoted field only
      // right after a delimiter or newline (or at the file's start)
      let i = 0
      let nl = -1
      let q = -1
      const startsField = (at: number) => (at === 0 ? fieldStart : chunk[at - 1] === delimiter || chunk[at - 1] === NL)
      while (i < chunk.length) {
        if (inQuotes) {
          if (!afterQuote) {
            if (q < i) q = chunk.indexOf(QUOTE, i)
            if (q === -1) break
            afterQuote = true
            i = q + 1
            continue
          }
          afterQuote = false
          const b = chunk[i]!
          if (b === QUOTE) {
            i++ // "" inside a quoted field
            continue
          }
          // a quote followed by anything but a field's end is a stray one: the field is still quoted
          if (b !== delimiter && b !== NL && b !== CR && b !== SPACE && b !== TAB) continue
          inQuotes = false
        }
        if (nl < i && nl !== -2) nl = chunk.indexOf(NL, i)
        if (nl === -1) nl = -2 // none in this chunk: not searched again
        if (q < i && q !== -2) q = chunk.indexOf(QUOTE, i)
        if (q === -1) q = -2
        if (nl >= 0 && (q < 0 || nl < q)) {
          if (skipBlank && size === 0 && (nl === start || (nl === start + 1 && chunk[start] === CR))) line++
          else {
            take(chunk.subarray(start, nl))
            yield end()
            if (performance.now() - turn > TURN_MS) turn = await aTurn()
          }
          start = nl + 1
          i = nl + 1
        } else if (q >= 0) {
          if (startsField(q)) inQuotes = true
          i = q + 1
        } else break
      }
      if (chunk.length) fieldStart = chunk[chunk.length - 1] === delimiter || chunk[chunk.length - 1] === NL
    }
    take(chunk.subarray(start))
  }
  if (size > 0 || sample) yield end()
}

const decoder = new TextDecoder()
const decode = (bytes: Uint8Array) => decoder.decode(bytes)

/**
 * The fields of one CSV record (RFC 4180 quoting when `quoted`), or null when it has more than
 * `max` fields (counted before any field is made).
 */
export function splitFields(text: string, delimiter: string, quoted: boolean, max = MAX_COLUMNS): string[] | null {
  if (!quoted || !text.includes('"')) {
    let count = 1
    for (let at = text.indexOf(delimiter); at !== -1; at = text.indexOf(delimiter, at + delimiter.length))
      if (++count > max) return null
    return text.split(delimiter)
  }
  const fields: string[] = []
  let i = 0
  for (;;) {
    if (fields.length === max) return null
    if (text[i] === '"') {
      // a quoted field: "" is a quote; text after the closing quote up to the delimiter is kept
      let value = ''
      let from = i + 1
      for (;;) {
        const q = text.indexOf('"', from)
        if (q === -1) {
          value += text.slice(from)
          i = text.length
          break
        }
        if (text[q + 1] === '"') {
          value += text.slice(from, q + 1)
          from = q + 2
          continue
        }
        value += text.slice(from, q)
        i = q + 1
        break
      }
      const next = text.indexOf(delimiter, i)
      const stop = next === -1 ? text.length : next
      value += text.slice(i, stop).trimEnd()
      fields.push(value)
      if (next === -1) return fields
      i = next + delimiter.length
    } else {
      const next = text.indexOf(delimiter, i)
      if (next === -1) {
        fields.push(text.slice(i))
        return fields
      }
      fields.push(text.slice(i, next))
      i = next + delimiter.length
    }
  }
}

/** The delimiter of a CSV file, guessed (as Papa Parse guesses it) from its first lines. */
export function guessDelimiter(head: string, quoted: boolean): string {
  const guessed = Papa.parse(head, {
    preview: 10,
    delimiter: '',
    skipEmptyLines: 'greedy',
    quoteChar: quoted ? '"' : '\u0000',
  }).meta.delimiter
  return guessed || ','
}

export type CsvRow =
  | { line: number; row: Record<string, string>; problem?: undefined; input?: undefined }
  | { line: number; row?: undefined; problem: string; input: string }

export type CsvOptions = {
  /** '' guesses the delimiter from the first lines */
  delimiter?: string
  /** false for exports that never quote (Open Food Facts' tab-separated export) */
  quoted?: boolean
  /** header names as the reader uses them (default: trimmed, BOM removed) */
  header?: (name: string) => string
  /** told the header's names once they are read */
  onHeader?: (names: string[]) => void
}

const isBlank = (fields: string[]) => fields.every((f) => f.trim() === '')

/**
 * Rows of a CSV/TSV stream as objects keyed by the header: quoted newlines stay in their field,
 * blank rows are skipped, `line` counts rows with the header as line 1. A row that is too long or
 * has too many fields is a problem of its own; a header that is is an InputLimitError.
 */
export async function* csvRows(
  source: AsyncIterable<Uint8Array>,
  { delimiter = '', quoted = true, header: name = (h) => h.trim(), onHeader }: CsvOptions = {},
): AsyncGenerator<CsvRow> {
  let head: string[] | null = null
  let line = 1
  // a quote opens a field only after a delimiter, so the delimiter is needed before the first
  // record is cut: when not given, it is guessed from the first 64 KiB (or the whole, shorter file)
  const it = source[Symbol.asyncIterator]()
  const pending: Uint8Array[] = []
  let sep = delimiter
  if (sep === '') {
    let seen = 0
    while (seen < 65_536) {
      const next = await it.next()
      if (next.done) break
      pending.push(next.value)
      seen += next.value.byteLength
    }
    sep = guessDelimiter(decoder.decode(Buffer.concat(pending)).replace(/^\uFEFF/, ''), quoted)
  }
  async function* all(): AsyncGenerator<Uint8Array> {
    try {
      yield* pending
      pending.length = 0
      for (let next = await it.next(); !next.done; next = await it.next()) yield next.value
    } finally {
      await it.return?.()
    }
  }
  for await (const record of textRecords(all(), { quotedBy: quoted ? sep : undefined, skipBlank: true })) {
    if (head === null) {
      if (record.problem) throw new InputLimitError(`the header line is too long (${record.problem})`)
      const fields = splitFields(record.text.replace(/^\uFEFF/, ''), sep, quoted)
      if (!fields) throw new InputLimitError(`the header has more than ${MAX_COLUMNS} columns`)
      if (isBlank(fields)) continue
      const seen = new Map<string, number>()
      head = fields.map((f) => {
        const base = name(f.replace(/^\uFEFF/, ''))
        const n = seen.get(base) ?? 0
        seen.set(base, n + 1)
        return n ? `${base}_${n}` : base
      })
      onHeader?.(head)
      continue
    }
    if (record.problem) {
      yield { line: ++line, problem: record.problem, input: record.text }
      continue
    }
    const fields = splitFields(record.text, sep, quoted)
    if (!fields) {
      yield {
        line: ++line,
        problem: `the row has more than ${MAX_COLUMNS} columns; at most ${MAX_COLUMNS} are read`,
        input: sampleOf(record.text),
      }
      continue
    }
    if (isBlank(fields)) continue
    const row: Record<string, string> = {}
    const own = record.text.length > OWN_FIELDS_AFTER
    for (let i = 0; i < fields.length && i < head.length; i++)
      row[head[i]!] = own ? Buffer.from(fields[i]!).toString() : fields[i]!
    yield { line: ++line, row }
  }
}
