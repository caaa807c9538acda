// A throwaway database and the service in its own process, as in production, for benchmarks.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** CPU time a process has used so far (user + system, Linux /proc), in seconds. */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * `poolSize`: connections of this process's own pool (seeding, emitting), beside the server's.
 * `keepIn`: a directory whose database outlives the run (a later run reuses it), else a throwaway one.
 * `launcher`: a command the server is started through (`cpuPinning().server`), else none.
 * `env`: variables for the server's process alone, over this process's environment.
 */
export async function startBenchServer(
  poolSize = 2,
  keepIn?: string,
  launcher: string[] = [],
  env: Record<string, string> = {},
) {
  const dataDir = keepIn ?? mkdtempSync(join(tmpdir(), 'gtin-bench-'))
  process.env.DATA_DIR = dataDir
  process.env.LOG_LEVEL ??= 'warn'
  const { config } = await import('../../src/config')
  const { openDatabase, routeEmitsOf } = await import('../../src/runtime')
  const { features } = await import('../../src/features')
  const { freePort, waitForHealth } = await import('../../test/support/process')
  const database = await openDatabase(config, poolSize)

  // Logs go to a file, as under a process manager; a pipe read by this busy process would throttle it.
  const port = await freePort()
  const logFile = join(dataDir, 'server.log')
  // as `npm start` runs it: bin/serve, with its runtime settings
  const command = [...launcher, 'sh', 'bin/serve']
  const server: ChildProcess = spawn(command[0]!, command.slice(1), {
    env: {
      ...process.env,
      ...(process.env.SERVER_PROFILE ? { BUN_OPTIONS: '--cpu-prof-md --cpu-prof-dir=/tmp/prof' } : {}),
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      ROLE: process.env.SERVER_ROLE ?? 'all',
      LOG_LEVEL: process.env.SERVER_LOG_LEVEL ?? 'info',
      ...env,
    },
    stdio: ['ignore', openSync(logFile, 'a'), openSync(logFile, 'a')],
  })
  const exited = new Promise((done) => server.on('exit', done))
  const base = `http://127.0.0.1:${port}`
  await waitForHealth(base)
  // this process writes through the services too (seed data, the webhook bench's events): their
  // events go the way the server's do (at-commit hooks, then pg-boss), so no work leaves the measure
  const { startBoss, stopBoss } = await import('../../src/db/boss')
  await startBoss(database.url, false, config.SCHEDULE_INTERVAL_SECONDS)
  routeEmitsOf(features)
  return {
    base,
    database,
    logFile,
    config,
    logLevel: process.env.SERVER_LOG_LEVEL ?? 'info',
    /** the server process's peak resident set so far (Linux VmHWM), in bytes */
    peakRss: () => {
      const status = readFileSync(`/proc/${server.pid}/status`, 'utf8')
      return Number(status.match(/VmHWM:\s+(\d+) kB/)?.[1] ?? 0) * 1024
    },
    /** CPU time the server process has used so far (user + system, Linux /proc), in seconds */
    cpuSeconds: () => cpuSecondsOf(server.pid!),
    async stop() {
      server.kill('SIGTERM')
      await exited
      await stopBoss()
      await database.close()
      if (!keepIn) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
