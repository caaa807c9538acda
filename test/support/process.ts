import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { eventually } from './eventually'

export const ROOT = join(import.meta.dir, '..', '..')

export function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => done(port))
    })
  })
}

export type Spawned = {
  proc: ChildProcess
  /** stdout and stderr, interleaved */
  output: () => string
  /** stdout alone (what a command prints, as opposed to what it logs) */
  stdout: () => string
  exited: Promise<number | null>
  /** Signals the whole process group (npm and the bun it starts). */
  kill: (signal: NodeJS.Signals) => void
}

/**
 * A command in its own process group, with stdout+stderr captured. It inherits this process's
 * environment unless `only` is set, in which case `env` is all it gets.
 */
export function start(
  cmd: string[],
  env: Record<string, string>,
  opts: { cwd?: string; only?: boolean } = {},
): Spawned {
  const proc = spawn(cmd[0]!, cmd.slice(1), {
    cwd: opts.cwd ?? ROOT,
    env: opts.only ? env : { ...process.env, LOG_LEVEL: 'info', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let stdout = ''
  proc.stdout!.on('data', (d) => {
    out += d
    stdout += d
  })
  proc.stderr!.on('data', (d) => (out += d))
  // 'close': every process holding the pipes (npm and the bun under it) has ended
  const exited = new Promise<number | null>((done) => proc.on('close', (code) => done(code)))
  return {
    proc,
    output: () => out,
    stdout: () => stdout,
    exited,
    kill: (signal) => {
      try {
        process.kill(-proc.pid!, signal)
      } catch {}
    },
  }
}

/** Runs a command to completion. */
export async function run(cmd: string[], env: Record<string, string>) {
  const p = start(cmd, env)
  const code = await p.exited
  return { code, output: p.output(), stdout: p.stdout() }
}

/** Waits until `url` answers /healthz with 2xx; a refused connection is "not yet". */
export async function waitForHealth(url: string, ms = 30_000) {
  await eventually(
    async () => {
      try {
        return (await fetch(`${url}/healthz`)).ok
      } catch {
        return false
      }
    },
    ms,
    `${url} to become healthy`,
  )
}

/** `sh bin/serve` (what `npm start` runs: bun main.ts) on a free port; resolves once healthy. */
export async function startServer(env: Record<string, string>) {
  const port = await freePort()
  const server = start(['sh', 'bin/serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    ...env,
  })
  const url = `http://127.0.0.1:${port}`
  await Promise.race([
    waitForHealth(url),
    server.exited.then((code) => {
      throw new Error(`server exited (${code}): ${server.output()}`)
    }),
  ])
  return { ...server, url }
}
