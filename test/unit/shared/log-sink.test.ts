import { describe, expect, test } from 'bun:test'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FLUSH_INTERVAL_MS, LineSink } from '../../../src/shared/log-sink'
import { eventually } from '../../support/eventually'

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean)
const LOGGER = JSON.stringify(join(import.meta.dir, '../../../src/shared/logger'))

/** Runs `script` (with `LOGGER`, the logger module's path) in a child logging to a file: its lines and how it ended. */
async function childLog(name: string, script: string) {
  const file = join(tmpdir(), `sink-${name}-${process.pid}-${Date.now()}.log`)
  const out = openSync(file, 'w')
  const child = Bun.spawn([process.execPath, '-e', script], {
    env: { ...process.env, LOG_LEVEL: 'info', LOG_TARGET: 'stdout' },
    stdout: out,
    stderr: 'inherit',
  })
  await child.exited
  closeSync(out)
  try {
    return { lines: lines(file), signal: child.signalCode }
  } finally {
    rmSync(file, { force: true })
  }
}

describe('log sink', () => {
  test('lines are gathered and written together within the flush interval; flush() writes at once', async () => {
    const file = join(tmpdir(), `sink-${process.pid}-${Date.now()}.log`)
    const fd = openSync(file, 'w')
    try {
      const sink = new LineSink(fd)
      sink.write('a\n')
      sink.write('b\n')
      expect(lines(file)).toEqual([]) // gathered, not yet written
      await new Promise((done) => setImmediate(done))
      expect(lines(file)).toEqual([]) // the end of a turn does not write them
      // the interval's timer writes them
      await eventually(() => lines(file).length === 2, FLUSH_INTERVAL_MS + 2_000, 'the interval flush')
      expect(lines(file)).toEqual(['a', 'b'])
      sink.write('c\n')
      sink.flush()
      expect(lines(file)).toEqual(['a', 'b', 'c'])
      // before 64 KiB are waiting the lines go out, without waiting for the interval
      const long = `${'x'.repeat(1023)}\n`
      for (let i = 0; i < 70; i++) sink.write(long)
      expect(lines(file).length).toBeGreaterThanOrEqual(3 + 60)
      expect(lines(file).length).toBeLessThanOrEqual(3 + 64)
      sink.flush()
      expect(lines(file).length).toBe(73)
      // a line longer than the buffer, with multi-byte characters, arrives whole
      const huge = `${'é'.repeat(40_000)}\n`
      sink.write(huge)
      sink.flush()
      expect(lines(file).at(-1)).toBe(huge.trim())
    } finally {
      closeSync(fd)
      rmSync(file, { force: true })
    }
  })

  test('a warn line, and the info lines before it, survive a kill -9 right after it', async () => {
    const { lines: written, signal } = await childLog(
      'kill',
      `const { logger } = await import(${LOGGER})
      logger.info('request line')
      logger.warn('about to die')
      process.kill(process.pid, 'SIGKILL')`,
    )
    expect(signal).toBe('SIGKILL')
    expect(written.map((l) => JSON.parse(l).msg)).toEqual(['request line', 'about to die'])
  })

  test("a request line has the shape of the logger's own lines and escapes what the client sent", async () => {
    const { lines: written } = await childLog(
      'request',
      `const { logger, logRequestLine, flushLogs } = await import(${LOGGER})
      logger.info({ request_id: 'a', method: 'GET', path: '/x', status: 200 })
      logRequestLine({ id: 'b', method: 'GET', path: '/01/"q"\\\\\\u0001é', status: 307, durationMs: 1.25 })
      logRequestLine({ id: '', method: 'POST', path: '/y', status: 500 })
      flushLogs()`,
    )
    const [pinoLine, escaped, anonymous] = written.map((l) => JSON.parse(l))
    expect(Object.keys(escaped)).toEqual([...Object.keys(pinoLine), 'duration_ms'])
    expect(escaped).toMatchObject({ level: 30, service: 'gtin-catalog', request_id: 'b', status: 307 })
    expect(escaped.path).toBe('/01/"q"\\\u0001é')
    expect(escaped.duration_ms).toBe(1.25)
    expect(new Date(escaped.time).toISOString()).toBe(escaped.time)
    expect(anonymous).toEqual({
      level: 30,
      time: anonymous.time,
      service: 'gtin-catalog',
      method: 'POST',
      path: '/y',
      status: 500,
    })
  })
})
