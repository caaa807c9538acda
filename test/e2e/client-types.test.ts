import { describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../support/process'

// `tsc --noEmit` on a small caller of the package (test/e2e/client-types/caller.ts): it passes as
// written, and the same file without its `@ts-expect-error` lines fails on each misspelled field.
// Both files are checked in ONE program (one tsc run loads the client's types once: two runs took
// twice the time): every error must be in the copy, none in the caller (an unused
// `@ts-expect-error` would be one there).
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
    writeFileSync(join(dir, 'unguarded.ts'), unguarded)
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        include: ['unguarded.ts', '../../test/e2e/client-types/caller.ts'],
      }),
    )
    const [code, out] = await tsc(join(dir, 'tsconfig.json'))
    expect(code).toBe(2)
    const errors = out.split('\n').filter((l) => l.includes('error TS'))
    // the caller as written: no error at all
    expect(errors.filter((e) => e.includes('client-types/caller.ts'))).toEqual([])
    // its copy without the guards: exactly the three misspelled fields
    expect(errors).toHaveLength(3)
    expect(errors.every((e) => e.includes('.test-data/client-types/unguarded.ts'))).toBe(true)
    for (const field of ['product_nmae', 'rnak', 'crt'])
      expect(
        errors.some((e) => e.includes('unguarded.ts') && /TS(2339|2551)/.test(e) && e.includes(`'${field}'`)),
      ).toBe(true)
  }, 300_000) // a whole-program tsc run: a minute on a loaded 2-core machine
})
