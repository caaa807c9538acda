import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import Papa from 'papaparse'

/** The bytes of a feed file, decompressed when it is gzip (by its magic number, not its name). */
export async function openInput(path: string, onBytes?: (n: number) => void): Promise<Readable> {
  const handle = await open(path, 'r')
  const head = Buffer.alloc(2)
  await handle.read(head, 0, 2, 0)
  await handle.close()
  const raw = createReadStream(path)
  if (onBytes) raw.on('data', (chunk) => onBytes(chunk.length))
  if (head[0] !== 0x1f || head[1] !== 0x8b) return raw
  const gunzip = createGunzip()
  raw.on('error', (err) => gunzip.destroy(err))
  return raw.pipe(gunzip)
}

/** Lines of a UTF-8 stream, without line ends, numbered from 1. */
export async function* lines(stream: Readable): AsyncGenerator<{ line: number; text: string }> {
  const decoder = new TextDecoder()
  let rest = ''
  let line = 0
  for await (const chunk of stream) {
    rest += decoder.decode(chunk as Uint8Array, { stream: true })
    let start = 0
    for (let end = rest.indexOf('\n'); end !== -1; end = rest.indexOf('\n', start)) {
      line++
      yield { line, text: rest.slice(start, end).replace(/\r$/, '') }
      start = end + 1
    }
    rest = rest.slice(start)
  }
  rest += decoder.decode()
  if (rest !== '') yield { line: line + 1, text: rest.replace(/\r$/, '') }
}

export type CsvOptions = {
  /** '' sniffs the delimiter from the first rows */
  delimiter?: string
  /** false for exports that never quote (Open Food Facts' tab-separated export) */
  quoted?: boolean
}

/**
 * Rows of a CSV/TSV stream as objects keyed by the header (BOM removed, quoted newlines kept in
 * their field); `line` counts records with the header as line 1.
 */
export async function* csvRows(
  stream: Readable,
  { delimiter = '', quoted = true }: CsvOptions = {},
): AsyncGenerator<{ line: number; row: Record<string, string> }> {
  const parser = Papa.parse(Papa.NODE_STREAM_INPUT, {
    header: true,
    delimiter,
    skipEmptyLines: 'greedy',
    quoteChar: quoted ? '"' : '\u0000',
    transformHeader: (h: string) => h.replace(/^\uFEFF/, '').trim(),
  })
  stream.on('error', (err) => parser.destroy(err))
  stream.pipe(parser)
  let line = 1
  for await (const row of parser) {
    line++
    yield { line, row: row as Record<string, string> }
  }
}
