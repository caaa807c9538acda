import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import madge from 'madge'
import { ROOT } from './support/process'

// The seams of the pipeline, checked on the source: no import cycle anywhere, src/ never imports
// jobs/ (features declare queues; jobs/ binds handlers), and no dynamic import hides a dependency.

const graph = await madge(
  ['main.ts', 'src', 'jobs', 'scripts'].filter((p) => existsIn(p)),
  {
    baseDir: ROOT,
    fileExtensions: ['ts'],
    tsConfig: join(ROOT, 'tsconfig.json'),
    // `import type` is erased before anything runs: the products table is built from the field
    // list (search columns) while the field list types its columns from the table
    detectiveOptions: { ts: { skipTypeImports: true }, tsx: { skipTypeImports: true } },
  },
)

function existsIn(path: string) {
  return readdirSync(ROOT).includes(path)
}

const sourceFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))

describe('architecture', () => {
  test('no circular import among main.ts, src, jobs and scripts (madge)', () => {
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(50)
    expect(graph.circular()).toEqual([])
  })

  test('nothing in src/ imports jobs/', () => {
    const offending = Object.entries(graph.obj())
      .filter(([file]) => file.startsWith('src/'))
      .flatMap(([file, deps]) => deps.filter((d) => d.startsWith('jobs/')).map((d) => `${file} -> ${d}`))
    expect(offending).toEqual([])
    // jobs/ does bind handlers to the features' queues
    expect(graph.obj()['jobs/index.ts']).toContain('src/db/queues.ts')
  })

  test('src/db/schema imports nothing from src/search (search owns its documents, not the catalog rows)', () => {
    const found = sourceFiles('src/db/schema').filter((f) =>
      /from ['"](\.\.\/){2,}search(\/|['"])/.test(readFileSync(f, 'utf8')),
    )
    expect(found).toEqual([])
  })

  test('no dynamic import in src/', () => {
    const found = sourceFiles('src').filter((f) => /(?<![.\w$])import\(/.test(readFileSync(f, 'utf8')))
    expect(found).toEqual([])
  })
})
