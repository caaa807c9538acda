import { describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../support/process'

// `tsc --noEmit` on test/integration/events/types/emitter.ts, which emits and subscribes through the event map:
// it passes as written, and the same file without its `@ts-expect-error` lines fails once per
// mismatched payload (two emits, one subscriber reading a field its events do not carry).
const tsc = (project: string) => {
  const proc = Bun.spawn([join(ROOT, 'node_modules/.bin/tsc'), '-p', project], { cwd: ROOT, stdout: 'pipe' })
  return Promise.all([proc.exited, new Response(proc.stdout).text()])
}

describe('typed events', () => {
  test('tsc catches an event payload that does not match its type', async () => {
    const dir = join(ROOT, '.test-data', 'event-types')
    mkdirSync(dir, { recursive: true })
    const source = readFileSync(join(ROOT, 'test/integration/events/types/emitter.ts'), 'utf8')
    const unguarded = source
      .split('\n')
      .filter((line) => !line.includes('@ts-expect-error'))
      .join('\n')
      .replaceAll("'../../../../src/", `'${join(ROOT, 'src')}/`)
    expect(unguarded).not.toBe(source)
    writeFileSync(join(dir, 'emitter.ts'), unguarded)
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', include: ['emitter.ts'] }),
    )
    const [[passCode, passOut], [failCode, failOut]] = await Promise.all([
      tsc('test/integration/events/types/tsconfig.json'),
      tsc(join(dir, 'tsconfig.json')),
    ])
    expect(passOut).toBe('')
    expect(passCode).toBe(0)
    expect(failCode).toBe(2)
    const errors = failOut.split('\n').filter((l) => l.includes('error TS'))
    expect(errors).toHaveLength(3)
    expect(errors.some((e) => e.includes("'gtin'"))).toBe(true)
  }, 180_000)
})
