import { afterAll, describe, expect, test } from 'bun:test'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { freePort, ROOT, start, waitForHealth } from '../support/process'
import { databaseUrl } from '../support/server'

// The production image without a Docker engine: the Dockerfile is read instruction by instruction
// and replayed into a temp dir with exactly its environment (ENV), its install step (RUN npm …),
// its copies (COPY, honouring .dockerignore) and its command (CMD), which must then serve.

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

const dir = mkdtempSync(join(tmpdir(), 'gtin-image-'))
const volume = mkdtempSync(join(tmpdir(), 'gtin-image-data-'))
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(volume, { recursive: true, force: true })
})

describe('production image (Dockerfile), replayed without Docker', () => {
  const steps = dockerfile()

  test('runs as an unprivileged user', () => {
    const users = steps.filter((s) => s.op === 'USER').map((s) => s.args)
    expect(users.length).toBeGreaterThan(0)
    expect(['root', '0', '0:0']).not.toContain(users.at(-1)!)
    // the user is set before the command runs
    expect(steps.findIndex((s) => s.op === 'USER')).toBeLessThan(steps.findIndex((s) => s.op === 'CMD'))
  })

  test('the install step with the image environment yields a server that starts and serves', async () => {
    // Only what the image has: PATH and HOME (npm's cache), then the Dockerfile's ENV.
    let env: Record<string, string> = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root' }
    let cmd: string[] = []
    for (const { op, args } of steps) {
      if (op === 'ENV') env = { ...env, ...envOf(args) }
      else if (op === 'COPY' && args === '. .')
        cpSync(ROOT, dir, {
          recursive: true,
          filter: (src) => !ignored.includes(relative(ROOT, src).split('/')[0]!),
        })
      else if (op === 'COPY')
        for (const file of args.split(/\s+/).slice(0, -1)) cpSync(join(ROOT, file), join(dir, file))
      else if (op === 'RUN' && args.startsWith('npm ')) {
        const proc = Bun.spawn(['sh', '-c', args], { cwd: dir, env, stdout: 'pipe', stderr: 'pipe' })
        const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
        if (code !== 0) throw new Error(`"${args}" failed (${code}): ${err}`)
      } else if (op === 'CMD') cmd = JSON.parse(args)
    }
    expect(env.NODE_ENV).toBe('production')
    // a production install: no devDependencies, but the runtime the launcher (`sh bin/serve`) starts
    expect(existsSync(join(dir, 'node_modules', '@redocly'))).toBe(false)
    expect(existsSync(join(dir, 'node_modules', '@biomejs'))).toBe(false)
    expect(cmd.slice(0, 2)).toEqual(['sh', 'bin/serve'])
    expect(existsSync(join(dir, 'bin', 'serve'))).toBe(true)
    expect(existsSync(join(dir, 'node_modules', '.bin', 'bun'))).toBe(true)

    const port = await freePort()
    // the command as the image runs it, against the test database (compose sets DATABASE_URL)
    const server = start(
      cmd,
      { ...env, DATABASE_URL: databaseUrl, DATA_DIR: volume, PORT: String(port), HOST: '127.0.0.1' },
      { cwd: dir, only: true },
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
  }, 240_000)

  test('the image command is what `npm start` runs', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    const cmd = JSON.parse(steps.find((s) => s.op === 'CMD')!.args) as string[]
    expect(pkg.scripts.start).toBe(`exec ${cmd.join(' ')}`) // the same launcher (bin/serve)
    expect(Object.keys(pkg.dependencies)).toContain('bun')
  })
})
