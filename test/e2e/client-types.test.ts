import { describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../support/process'

// `tsc --noEmit` on a small caller of the package (test/e2e/client-types/caller.ts): it passes as
// written, and the same file without its `@ts-expect-error` lines fails on each misspelled field.
const tsc = (project: string) => {
  const proc = Bun.spawn([join(ROOT, 'node_modules/.bin/tsc'), '-p', project], { cwd: ROOT, stdout: 'pipe' })
  return Promise.all([proc.exited, new Response(proc.stdout).text()])
}

describe('typed client: types', () => {
  test('a misspelled response field fails tsc --noEmit', async () => {
    const dir = join(ROOT, '.test-data', 'client-types')
    mkdirSync(dir, { recursive: true })
    const caller = readFileSync(join(ROOT, 'test/e2e/client-types/caller.ts'), 'utf8')
    const unguarded = caller
      .split('\n')
      .filter((line) => !line.includes('@ts-expect-error'))
      .join('\n')
    expect(unguarded).not.toBe(caller)
    writeFileSync(join(dir, 'caller.ts'), unguarded)
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', include: ['caller.ts'] }),
    )
    const [[passCode, passOut], [failCode, failOut]] = await Promise.all([
      tsc('test/e2e/client-types/tsconfig.json'),
      tsc(join(dir, 'tsconfig.json')),
    ])
    expect(passOut).toBe('')
    expect(passCode).toBe(0)
    expect(failCode).toBe(2)
    const errors = failOut.split('\n').filter((l) => l.includes('error TS'))
    expect(errors).toHaveLength(3)
    for (const field of ['product_nmae', 'rnak', 'crt'])
      expect(errors.some((e) => /TS(2339|2551)/.test(e) && e.includes(`'${field}'`))).toBe(true)
  }, 300_000) // two whole-program tsc runs at once: minutes on a loaded 2-core machine
})
