import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../support/process'

// What tsc must catch, shown by small callers whose `@ts-expect-error` lines mark each mistake:
// the typed client (Eden, the app's own type), the SDK's named methods and the typed event map.
// Each caller passes `tsc --noEmit` as written, and its copy without those lines fails once per
// marked mistake. All six files are checked in ONE tsc program: each run loads the server's types
// again (a whole-program check is a minute on a loaded 2-core machine), so one run instead of six.
const CALLERS = {
  client: 'test/e2e/client-types/caller.ts',
  sdk: 'test/e2e/client-types/sdk/caller.ts',
  events: 'test/e2e/event-types/emitter.ts',
} as const
type Caller = keyof typeof CALLERS

const dir = join(ROOT, '.test-data', 'type-checks')
const copyOf = (name: Caller) => join(dir, `${name}-unguarded.ts`)

/** The caller without its guards, its relative imports made absolute (the copy lives elsewhere). */
function unguarded(path: string) {
  const source = readFileSync(join(ROOT, path), 'utf8')
  const text = source
    .split('\n')
    .filter((line) => !line.includes('@ts-expect-error'))
    .join('\n')
    .replace(/from '(\.\.?\/[^']+)'/g, (_, rel: string) => `from '${resolve(ROOT, dirname(path), rel)}'`)
  return { source, text }
}

let code = 0
let errors: string[] = []
const copies = {} as Record<Caller, { source: string; text: string }>
/** The errors tsc reported in one file (tsc names files relative to its working directory). */
const errorsIn = (file: string) => errors.filter((e) => e.startsWith(`${relative(ROOT, file)}(`))

beforeAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const name of Object.keys(CALLERS) as Caller[]) {
    copies[name] = unguarded(CALLERS[name])
    writeFileSync(copyOf(name), copies[name].text)
  }
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      include: [
        ...Object.values(CALLERS).map((p) => `../../${p}`),
        ...Object.keys(CALLERS).map((n) => `${n}-unguarded.ts`),
      ],
    }),
  )
  const proc = Bun.spawn([join(ROOT, 'node_modules/.bin/tsc'), '-p', join(dir, 'tsconfig.json')], {
    cwd: ROOT,
    stdout: 'pipe',
  })
  const [exit, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()])
  code = exit
  errors = out.split('\n').filter((l) => l.includes('error TS'))
}, 300_000) // one whole-program tsc run: a minute on a loaded 2-core machine

describe('typed client: types', () => {
  test('a misspelled response field fails tsc --noEmit', () => {
    const { source, text } = copies.client
    expect(text).not.toBe(source)
    expect(code).toBe(2)
    // the caller as written: no error at all (an unused `@ts-expect-error` would be one)
    expect(errorsIn(join(ROOT, CALLERS.client))).toEqual([])
    // its copy without the guards: exactly the three misspelled fields
    const mine = errorsIn(copyOf('client'))
    expect(mine).toHaveLength(3)
    expect(mine.every((e) => e.includes('.test-data/type-checks/client-unguarded.ts'))).toBe(true)
    for (const field of ['product_nmae', 'rnak', 'crt'])
      expect(mine.some((e) => /TS(2339|2551)/.test(e) && e.includes(`'${field}'`))).toBe(true)
  })
})

describe('SDK: types', () => {
  test('a small caller type-checks; its misspellings fail', () => {
    expect(errorsIn(join(ROOT, CALLERS.sdk)).join('\n')).toBe('')
    expect(errorsIn(copyOf('sdk')).length).toBeGreaterThan(0)
    expect(code).toBe(2)
    const mine = errorsIn(copyOf('sdk')).join('\n')
    expect(mine).toContain("'product_nmae'")
    expect(mine).toContain("'claimd'")
  })
})

describe('typed events', () => {
  test('tsc catches an event payload that does not match its type', () => {
    const { source, text } = copies.events
    expect(text).not.toBe(source)
    expect(errorsIn(join(ROOT, CALLERS.events)).join('\n')).toBe('')
    expect(errorsIn(copyOf('events')).length).toBeGreaterThan(0)
    expect(code).toBe(2)
    const mine = errorsIn(copyOf('events'))
    // two emits and one subscriber reading a field its events do not carry
    expect(mine).toHaveLength(3)
    expect(mine.some((e) => e.includes("'gtin'"))).toBe(true)
  })
})
