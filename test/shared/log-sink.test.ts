import { describe, expect, test } from 'bun:test'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LineSink } from '../../src/shared/log-sink'

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean)

describe('log sink', () => {
  test('the lines of one turn are written together when it ends; flush() writes at once', async () => {
    const file = join(tmpdir(), `sink-${process.pid}-${Date.now()}.log`)
    const fd = openSync(file, 'w')
    try {
      const sink = new LineSink(fd)
      sink.write('a\n')
      sink.write('b\n')
      expect(lines(file)).toEqual([]) // gathered, not yet written
      await new Promise((done) => setImmediate(done))
      expect(lines(file)).toEqual(['a', 'b'])
      sink.write('c\n')
      sink.flush()
      expect(lines(file)).toEqual(['a', 'b', 'c'])
      // past 64 KiB a turn's lines go out without waiting for its end
      const long = `${'x'.repeat(1023)}\n`
      for (let i = 0; i < 70; i++) sink.write(long)
      expect(lines(file).length).toBeGreaterThanOrEqual(3 + 64)
      sink.flush()
      expect(lines(file).length).toBe(73)
    } finally {
      closeSync(fd)
      rmSync(file, { force: true })
    }
  })

  test('a warn line, and the info lines before it, survive a kill -9 right after it', async () => {
    const file = join(tmpdir(), `sink-kill-${process.pid}-${Date.now()}.log`)
    const script = `
      const { logger } = await import(${JSON.stringify(join(import.meta.dir, '../../src/shared/logger'))})
      logger.info('request line')
      logger.warn('about to die')
      process.kill(process.pid, 'SIGKILL')`
    const out = openSync(file, 'w')
    const child = Bun.spawn([process.execPath, '-e', script], {
      env: { ...process.env, LOG_LEVEL: 'info', LOG_TARGET: 'stdout' },
      stdout: out,
      stderr: 'inherit',
    })
    await child.exited
    closeSync(out)
    try {
      expect(child.signalCode).toBe('SIGKILL')
      expect(lines(file).map((l) => JSON.parse(l).msg)).toEqual(['request line', 'about to die'])
    } finally {
      rmSync(file, { force: true })
    }
  })
})
