import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { FeedSpec } from '../../../src/feeds/adapters'
import { readChunks, stopReader } from '../../../src/feeds/read-chunks'
import type { ReadChunk } from '../../../src/feeds/read-protocol'

// The feed reader's thread (src/feeds/read-thread.ts): a file's rows come back in chunks of the
// asked size, records as the payload's JSON with their lines, rejected rows counted and sampled, and
// a read that breaks says why after the rows before the break. A thread that dies fails the reads in
// progress (their jobs are retried) and the next read starts another thread.

const OFF = join(import.meta.dir, '../../fixtures/feeds/off/products.jsonl')
const dir = mkdtempSync(join(tmpdir(), 'read-thread-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const spec = (path: string, format: FeedSpec['format'] = 'off_jsonl'): FeedSpec => ({
  format,
  path,
  observedAt: new Date('2026-11-01T00:00:00Z'),
})

async function all(path: string, chunkRows: number, format?: FeedSpec['format']) {
  const chunks: ReadChunk[] = []
  for await (const chunk of readChunks(spec(path, format), chunkRows)) chunks.push(chunk)
  return chunks
}

describe("the feed reader's thread", () => {
  test('reads the real OFF sample in chunks of the asked size, every line once, in order', async () => {
    const lines = readFileSync(OFF, 'utf8')
      .split('\n')
      .filter((l) => l.trim()).length
    const chunks = await all(OFF, 10)
    expect(chunks.map((c) => c.read)).toEqual([
      ...Array(Math.floor(lines / 10)).fill(10),
      ...(lines % 10 ? [lines % 10] : [0]),
    ])
    expect(chunks.at(-1)!.done).toBe(true)
    expect(chunks.slice(0, -1).every((c) => !c.done && !c.error)).toBe(true)
    const records = chunks.flatMap((c) => JSON.parse(c.payload) as { line: number; gtin14: string }[])
    const rejected = chunks.reduce((n, c) => n + c.rejected, 0)
    expect(records.length + rejected).toBe(lines)
    const seen = [...records.map((r) => r.line), ...chunks.flatMap((c) => c.sample.map((s) => s.line))]
    expect(seen.toSorted((a, b) => a - b)).toEqual(Array.from({ length: lines }, (_, i) => i + 1))
    expect(records.every((r) => /^\d{14}$/.test(r.gtin14))).toBe(true)
    expect(chunks.at(-1)!.bytes).toBe(readFileSync(OFF).byteLength)
  })

  test("a reason quoting a huge value is kept cut, like the row's input", async () => {
    // a code of 200,000 digits: its reason quotes it
    const path = join(dir, 'huge-code.jsonl')
    writeFileSync(path, `${JSON.stringify({ code: '1'.repeat(200_000), product_name: 'x' })}\n`)
    const [chunk] = await all(path, 10)
    expect(chunk!.rejected).toBe(1)
    const [row] = chunk!.sample
    expect(row!.line).toBe(1)
    expect(row!.reason.length).toBeLessThanOrEqual(500)
    expect(row!.reason.length).toBeGreaterThan(20)
    expect(row!.input.length).toBeLessThanOrEqual(200)
  })

  test('a gzip cut short: the rows before the break, then the reason', async () => {
    const whole = gzipSync(readFileSync(OFF))
    const path = join(dir, 'cut.jsonl.gz')
    writeFileSync(path, whole.subarray(0, Math.floor(whole.byteLength * 0.7)))
    const chunks = await all(path, 1000)
    const last = chunks.at(-1)!
    expect(last.done).toBe(true)
    expect(last.error).toContain('the file ends early: a truncated gzip stream')
    expect(chunks.reduce((n, c) => n + c.read, 0)).toBeGreaterThan(0)
  })

  test('two files read at once come back each as it does alone', async () => {
    const [alone] = [await all(OFF, 7)]
    const [a, b] = await Promise.all([all(OFF, 7), all(OFF, 7)])
    expect(a).toEqual(alone.map((c, i) => ({ ...c, id: a[i]!.id })))
    expect(b).toEqual(alone.map((c, i) => ({ ...c, id: b[i]!.id })))
  })

  test('a folder read as a file: the read says why, and the thread goes on reading', async () => {
    // opening a folder succeeds and its first read fails (EISDIR): a handle left open then ended
    // the thread at its next collection, and every read on it with the thread
    const folder = join(import.meta.dir, '../../fixtures/feeds/usda')
    const [broken, sound] = await Promise.all([all(folder, 10, 'usda_json'), all(OFF, 10)])
    expect(broken).toHaveLength(1)
    expect(broken[0]!.error).toBe('the path is a folder; this format reads a single file')
    expect(sound.at(-1)!.done).toBe(true)
    expect(sound.at(-1)!.error).toBeUndefined()
    expect((await all(OFF, 100)).at(-1)!.error).toBeUndefined()
  })

  test('a thread that dies fails the read in progress; the next read starts another', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) =>
      JSON.stringify({ code: `400${String(i).padStart(9, '0')}`, product_name: `P ${i}` }),
    )
    const path = join(dir, 'long.jsonl')
    writeFileSync(path, lines.join('\n'))
    const reading = readChunks(spec(path), 10)
    expect((await reading.next()).value!.read).toBe(10)
    stopReader()
    await expect(
      (async () => {
        for await (const _ of reading);
      })(),
    ).rejects.toThrow("the feed reader's thread stopped")
    const again = await all(OFF, 100)
    expect(again.at(-1)!.done).toBe(true)
  })
})
