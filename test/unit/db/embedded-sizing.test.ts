import { afterAll, describe, expect, test } from 'bun:test'
import {
  appendFileSync,
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { availableMemory, sizedSettings, sizeNewCluster } from '../../../src/db/embedded-sizing'

const GB = 1024 ** 3
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A reader of these files alone (anything else: ENOENT, as a missing cgroup file). */
const files = (contents: Record<string, string>) => (file: string) => {
  if (file in contents) return contents[file]!
  throw Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' })
}

describe('the embedded cluster sized to the machine', () => {
  test('an eighth of the memory for shared buffers, between 128 MB and 1 GB; max_wal_size 4 GB', () => {
    expect(sizedSettings(24 * GB)).toEqual({ shared_buffers: '1024MB', max_wal_size: '4GB' })
    expect(sizedSettings(4 * GB)).toEqual({ shared_buffers: '512MB', max_wal_size: '4GB' })
    expect(sizedSettings(2 * GB).shared_buffers).toBe('256MB')
    expect(sizedSettings(512 * 1024 * 1024).shared_buffers).toBe('128MB')
  })

  test("the memory is the machine's unless a control group of the process, or one above it, sets less", () => {
    // cgroup v2: the process's own group has no limit, its parent 2 GB (systemd's MemoryMax=)
    const v2 = files({
      '/proc/self/cgroup': '0::/system.slice/catalog.service\n',
      '/sys/fs/cgroup/system.slice/catalog.service/memory.max': 'max\n',
      '/sys/fs/cgroup/system.slice/memory.max': `${2 * GB}\n`,
    })
    expect(availableMemory(v2, 24 * GB)).toBe(2 * GB)
    // a container's namespace: its own root is the group
    expect(
      availableMemory(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': `${GB}\n` }), 24 * GB),
    ).toBe(GB)
    // cgroup v1, memory among other controllers; "no limit" is a number near 2^63
    const v1 = files({
      '/proc/self/cgroup': '12:pids:/a\n4:cpu,memory:/docker/abc\n',
      '/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes': `${3 * GB}\n`,
      '/sys/fs/cgroup/memory/docker/memory.limit_in_bytes': '9223372036854771712\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
      '/sys/fs/cgroup/pids/a/memory.max': '1', // another controller's: not read
    })
    expect(availableMemory(v1, 24 * GB)).toBe(3 * GB)
    // no limit anywhere, or no /proc at all: the machine's
    expect(availableMemory(files({ '/proc/self/cgroup': '0::/user.slice\n' }), 8 * GB)).toBe(8 * GB)
    expect(availableMemory(files({}), 8 * GB)).toBe(8 * GB)
    // this machine: positive, no more than it has
    expect(availableMemory()).toBeGreaterThan(0)
  })

  test("written at the end of a new cluster's postgresql.conf, its owner and mode kept, where a later line changes it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'gtin-sizing-'))
    dirs.push(dir)
    const conf = join(dir, 'postgresql.conf')
    writeFileSync(conf, "# PostgreSQL's own file\nshared_buffers = 128MB\nmax_wal_size = 1GB\n")
    chmodSync(conf, 0o600)
    sizeNewCluster(dir, 4 * GB)
    const text = readFileSync(conf, 'utf8')
    expect(text.startsWith("# PostgreSQL's own file\nshared_buffers = 128MB\nmax_wal_size = 1GB\n")).toBe(true)
    // the sized lines after initdb's own (PostgreSQL takes the last)
    expect(text.trimEnd().split('\n').slice(-2)).toEqual(["shared_buffers = '512MB'", "max_wal_size = '4GB'"])
    expect(statSync(conf).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir)).toEqual(['postgresql.conf']) // the temporary file renamed into place
    appendFileSync(conf, "shared_buffers = '2GB'\n")
    expect(readFileSync(conf, 'utf8').trimEnd().endsWith("shared_buffers = '2GB'")).toBe(true)
  })
})
