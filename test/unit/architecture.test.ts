import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import madge from 'madge'
import { dispatchQueue } from '../../src/events/queues'
import { features } from '../../src/features'
import { type Feature, workersOf } from '../../src/runtime'
import { ROOT } from '../support/process'
import { CROSS_FEATURE_READS } from './architecture-allowed'

// The seams of the pipeline, checked on the source (issue 47, Done-when 1): no import cycle, type
// imports counted; src/db below everything but src/shared; every feature's wiring declared in its
// index and listed in src/features.ts (no registry filled by importing a file); queues declared in
// queues.ts files with exactly one worker each; no `any` in job or event wiring; a feature reads
// another feature's tables only through that feature's functions, or by a listed exception.

const graph = await madge(['main.ts', 'src', 'scripts'], {
  baseDir: ROOT,
  fileExtensions: ['ts'],
  tsConfig: join(ROOT, 'tsconfig.json'),
  // `import type` counts: a cycle of types is still a cycle a reader has to untangle
  detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
})

const sourceFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')
const SRC = sourceFiles('src')
const featureOf = (file: string) => file.split('/')[1]!
const all: readonly Feature[] = features
const FEATURES = new Set<string>(all.map((f) => f.name))

describe('architecture: imports', () => {
  test('no circular import among main.ts, src and scripts, type imports included (madge)', () => {
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(50)
    expect(graph.circular()).toEqual([])
  })

  test('src/db imports nothing from src/ but src/db and src/shared', () => {
    const offending = Object.entries(graph.obj())
      .filter(([file]) => file.startsWith('src/db/'))
      .flatMap(([file, deps]) =>
        deps.filter((d) => d.startsWith('src/') && !/^src\/(db|shared)\//.test(d)).map((d) => `${file} -> ${d}`),
      )
    expect(offending).toEqual([])
    // the check sees the schema's imports (it would pass on an empty graph otherwise)
    expect(graph.obj()['src/db/schema/events.ts']).toContain('src/shared/event-types.ts')
  })

  test('no top-level feeds/ or jobs/: a feature lives in one folder, src/<feature>/', () => {
    expect(existsSync(join(ROOT, 'feeds'))).toBe(false)
    expect(existsSync(join(ROOT, 'jobs'))).toBe(false)
    expect(existsSync(join(ROOT, 'src/feeds/index.ts'))).toBe(true)
  })

  test('no bare side-effect import in src/ (nothing is registered by importing a file)', () => {
    const found = SRC.filter((f) => /^\s*import\s+['"][^'"]+['"]/m.test(read(f)))
    expect(found).toEqual([])
  })

  test('no dynamic import in src/ (but in a script entry, `if (import.meta.main)`)', () => {
    const found = SRC.filter((f) => /(?<![.\w$])import\(/.test(read(f).split('if (import.meta.main)')[0]!))
    expect(found).toEqual([])
  })
})

// every module of src/ (the render thread's entry sets its own message handler, and is left out)
const modules = await Promise.all(
  SRC.filter((f) => f !== 'src/barcodes/render-worker.ts').map(async (file) => ({
    file,
    exports: Object.entries((await import(join(ROOT, file))) as Record<string, unknown>),
  })),
)
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null
const isQueue = (v: unknown) => isObject(v) && typeof v.send === 'function' && Array.isArray(v.formerly)
const isWorker = (v: unknown) => isObject(v) && typeof v.run === 'function' && isObject(v.queue)
const isSubscriber = (v: unknown) => isObject(v) && typeof v.handle === 'function' && Array.isArray(v.events)
const exported = (is: (v: unknown) => boolean) =>
  modules.flatMap(({ file, exports }) =>
    exports.filter(([, v]) => is(v)).map(([name, value]) => ({ file, name, value })),
  )

const workers = workersOf(all)
const listed = {
  queues: new Set<unknown>(all.flatMap((f) => f.queues ?? [])),
  workers: new Set<unknown>(all.flatMap((f) => f.workers ?? [])),
  subscribers: new Set<unknown>(all.flatMap((f) => f.subscribers ?? [])),
}

describe('architecture: features declare their wiring', () => {
  test('every feature folder has an index.ts whose feature value src/features.ts lists', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(ROOT, 'src', e.name, 'routes.ts')))
      .map((e) => e.name)
    expect(folders.length).toBeGreaterThan(8)
    for (const folder of folders) {
      expect({ folder, index: existsSync(join(ROOT, 'src', folder, 'index.ts')) }).toEqual({ folder, index: true })
      expect({ folder, listed: FEATURES.has(folder) }).toEqual({ folder, listed: true })
    }
  })

  test('queues are declared only in queues.ts files', () => {
    const found = SRC.filter(
      (f) =>
        basename(f) !== 'queues.ts' &&
        /\b(defineQueue|subscriberQueue|deadLettersOf)(<[^>]*>)?\(/.test(read(f).replace(/function \w+/g, '')),
    )
    expect(found).toEqual([])
  })

  test('every queue a module exports is listed by its feature, named <feature>.<verb>', () => {
    const queues = exported(isQueue)
    expect(queues.length).toBeGreaterThan(10)
    for (const { file, name, value } of queues) {
      const q = value as { name: string }
      if (value === dispatchQueue) continue // the runtime's: it hands events to the subscribers
      expect({ file, name, listed: listed.queues.has(value) }).toEqual({ file, name, listed: true })
      expect(q.name).toMatch(/^[a-z]+\.[a-z]+(-[a-z]+)*(\.dead)?$/)
      expect({ queue: q.name, feature: q.name.split('.')[0] }).toEqual({ queue: q.name, feature: featureOf(file) })
    }
  })

  test('every queue has exactly one worker, and every worker a listed queue', () => {
    const queueNames = [dispatchQueue, ...listed.queues].map((q) => (q as { name: string }).name)
    const workerNames = workers.map((w) => w.queue.name)
    expect(workerNames.toSorted()).toEqual(queueNames.toSorted())
    expect(new Set(workerNames).size).toBe(workerNames.length)
  })

  test('every worker and subscriber a module exports is listed in src/features.ts', () => {
    const found = [
      ...exported(isWorker).filter(({ value }) => !listed.workers.has(value)),
      ...exported(isSubscriber).filter(({ value }) => !listed.subscribers.has(value)),
    ].map(({ file, name }) => `${file}: ${name}`)
    expect(found).toEqual([])
    expect(exported(isSubscriber).length).toBe(listed.subscribers.size)
    expect(listed.subscribers.size).toBeGreaterThanOrEqual(2)
  })

  test('no `any` in job or event wiring', () => {
    const wiring = SRC.filter(
      (f) =>
        /^src\/(runtime|events)\//.test(f) ||
        f === 'src/db/queues.ts' ||
        /^(queues|workers|subscribers|fan-out|index)\.ts$/.test(basename(f)) ||
        f === 'src/features.ts',
    )
    expect(wiring.length).toBeGreaterThan(20)
    const found = wiring.flatMap((f) =>
      read(f)
        .split('\n')
        .map((line, i) => ({ line: line.replace(/\/\/.*|^\s*\*.*/, ''), at: `${f}:${i + 1}` }))
        .filter(({ line }) => /(:\s*any\b|<any\b|\bany\[\]|as any\b|,\s*any>)/.test(line))
        .map(({ at }) => at),
    )
    expect(found).toEqual([])
  })
})

/** Which feature owns each table: the schema file that declares it (src/db/schema/<feature>.ts). */
function tableOwners() {
  const owners = new Map<string, { feature: string; variable: string }>()
  const byFile: Record<string, string> = { counts: 'catalog', idempotency: 'http', limits: 'http' }
  for (const file of sourceFiles('src/db/schema')) {
    const feature = byFile[basename(file, '.ts')] ?? basename(file, '.ts')
    for (const m of read(file).matchAll(/export const (\w+) = pgTable\(\s*'(\w+)'/g))
      owners.set(m[2]!, { feature, variable: m[1]! })
  }
  return owners
}

describe('architecture: a feature reads another feature tables only through its functions', () => {
  test('the cross-feature table reads are exactly the listed exceptions (test/architecture-allowed.ts)', () => {
    const owners = tableOwners()
    expect(owners.get('products')).toEqual({ feature: 'catalog', variable: 'products' })
    const found: string[] = []
    for (const file of SRC.filter((f) => FEATURES.has(featureOf(f)))) {
      const text = read(file)
      const mine = featureOf(file)
      for (const [table, { feature, variable }] of owners) {
        // the layers' tables (events, idempotency keys) are read through the layers themselves
        if (feature === mine || !FEATURES.has(feature)) continue
        const imported = new RegExp(`import \\{[^}]*\\b${variable}\\b[^}]*\\} from '[./]*db/schema`).test(text)
        const raw = new RegExp(`\\b(from|join|update|into)\\s+${table}\\b`).test(text)
        if (imported || raw) found.push(`${file} ${table}`)
      }
    }
    expect(found.toSorted()).toEqual(Object.keys(CROSS_FEATURE_READS).toSorted())
    for (const reason of Object.values(CROSS_FEATURE_READS)) expect(reason.length).toBeGreaterThan(20)
  })
})
