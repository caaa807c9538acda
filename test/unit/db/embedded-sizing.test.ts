import { afterAll, describe, expect, test } from 'bun:test'
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { availableMemory, sizeCluster, sizedSettings } from '../../../src/db/embedded-sizing'

const GB = 1024 ** 3
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('the embedded cluster sized to the machine', () => {
  test('an eighth of the memory for shared buffers, between 128 MB and 1 GB; 4 GB of WAL between checkpoints', () => {
    expect(sizedSettings(24 * GB)).toEqual({ shared_buffers: '1024MB', max_wal_size: '4GB' })
    expect(sizedSettings(4 * GB)).toEqual({ shared_buffers: '512MB', max_wal_size: '4GB' })
    expect(sizedSettings(2 * GB).shared_buffers).toBe('256MB')
    expect(sizedSettings(512 * 1024 * 1024).shared_buffers).toBe('128MB')
  })

  test('the memory is a positive number no larger than the machine has', () => {
    const memory = availableMemory()
    expect(memory).toBeGreaterThan(0)
    expect(memory).toBeLessThanOrEqual(totalmem())
  })

  test('written to postgresql.conf once, where a later line changes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gtin-sizing-'))
    dirs.push(dir)
    const conf = join(dir, 'postgresql.conf')
    writeFileSync(conf, "# PostgreSQL's own file\nmax_connections = 100\n")
    sizeCluster(dir, 4 * GB)
    sizeCluster(dir, 24 * GB) // a second start adds nothing, whatever the memory now
    const text = readFileSync(conf, 'utf8')
    expect(text.startsWith("# PostgreSQL's own file\nmax_connections = 100\n")).toBe(true)
    expect(text.match(/^shared_buffers = '512MB'$/gm)).toHaveLength(1)
    expect(text.match(/^max_wal_size = '4GB'$/gm)).toHaveLength(1)
    expect(text).not.toContain('1024MB')
    // an operator's own line after the block stays last, and is not added to again
    appendFileSync(conf, "shared_buffers = '2GB'\n")
    sizeCluster(dir, 4 * GB)
    expect(readFileSync(conf, 'utf8').trimEnd().endsWith("shared_buffers = '2GB'")).toBe(true)
  })
})
