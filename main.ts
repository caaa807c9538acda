// The process entry (npm start): API and/or job workers by ROLE, composed from the features that
// src/features.ts lists (their routes, workers and subscribers).

import { createApp, createHealthApp } from './src/app'
import { config } from './src/config'
import { StartupError } from './src/db/embedded'
import { features } from './src/features'
import { largestUpload, sweepUploads } from './src/http/upload'
import { flushTraces } from './src/observability/tracing'
import { openDatabase, startBackground } from './src/runtime'
import { flushLogs, logger } from './src/shared/logger'

// A crash writes its line (synchronously) before the process goes.
function die(what: string, err: unknown): never {
  logger.fatal({ err }, what)
  flushLogs()
  process.exit(1)
}
process.on('uncaughtException', (err) => die('crashed: uncaught exception', err))
process.on('unhandledRejection', (err) => die('crashed: unhandled promise rejection', err))

/** What failed at startup and what to do about it, in one sentence. */
function startupAdvice(err: unknown): string {
  if (err instanceof StartupError) return err.message
  const e = (err ?? {}) as { code?: string; message?: string }
  const message = e.message ?? String(err)
  if (e.code === 'EADDRINUSE' || /EADDRINUSE|address already in use|port .* in use/i.test(message))
    return `port ${config.PORT} on ${config.HOST} is already in use: stop the other process or set PORT`
  if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || /timeout|terminated|connect/i.test(message))
    return `cannot reach PostgreSQL (${message}): check DATABASE_URL, or unset it to use the embedded database`
  if (e.code === '28P01' || e.code === '3D000')
    return `PostgreSQL refused the connection (${message}): check the user, password and database of DATABASE_URL`
  return `${message}: see the error above; fix the configuration or the database and start again`
}

// Startup must finish or fail within this time (a first start runs initdb, a few seconds; a
// cluster left running by a killed server is stopped first, at most a few seconds more).
const STARTUP_LIMIT_MS = 20_000
const watchdog = setTimeout(
  () =>
    die(`startup failed: still not serving after ${STARTUP_LIMIT_MS / 1000} s (database unreachable?); exiting`, null),
  STARTUP_LIMIT_MS,
)

let database: Awaited<ReturnType<typeof openDatabase>> | null = null
let stopBackground: () => Promise<void> = async () => {}
let app: ReturnType<typeof createApp> | ReturnType<typeof createHealthApp>
const serving = config.ROLE !== 'worker'
// A stop asked for while starting (the health check may already answer, start-up not yet done) is
// carried out once start-up is done: the default action would end the process on the spot, its
// embedded cluster left running (a fresh-clone CI run saw a SIGTERM land there, exit code null).
let started = false
let stopAskedBy: string | null = null
const onSignal = (signal: string) => {
  if (started) void shutdown(signal)
  else stopAskedBy ??= signal
}
process.on('SIGTERM', () => onSignal('SIGTERM'))
process.on('SIGINT', () => onSignal('SIGINT'))
process.on('SIGHUP', () => onSignal('SIGHUP'))
try {
  database = await openDatabase(config)
  // a second process on a taken port exits before its workers claim any job (the port is taken
  // for real only once the queues exist, so that /healthz never answers before they do)
  Bun.listen({ hostname: config.HOST, port: config.PORT, socket: { data() {} } }).stop(true)
  stopBackground = await startBackground(config, database.url, features, config.ROLE !== 'api')
  // A worker serves only /healthz and /readyz, so that it can be probed like the API.
  app = (serving ? createApp() : createHealthApp()).listen({
    port: config.PORT,
    hostname: config.HOST,
    // uploads stream through their routes, which answer 413 past their own limits (the largest:
    // FEED_UPLOAD_MAX_MB); Bun's own cap sits above it, so it never cuts one off with a 500
    maxRequestBodySize: largestUpload() + 16 * 1024 * 1024,
    // Elysia turns SO_REUSEPORT on, with which a second process on a taken port starts and the
    // kernel splits the requests between the two (and their databases); off, it fails EADDRINUSE
    reusePort: false,
  })
  // uploads a killed process left behind, now and every hour
  await sweepUploads()
  setInterval(() => void sweepUploads().catch(() => {}), 3600_000).unref()
} catch (err) {
  logger.fatal({ err }, `startup failed: ${startupAdvice(err)}`)
  flushLogs()
  // workers already started stop before the database does (else they report its shutdown)
  const cleanUp = async () => {
    await stopBackground().catch(() => {})
    await database?.close().catch(() => {})
    await flushTraces().catch(() => {})
  }
  await Promise.race([cleanUp(), Bun.sleep(3000)])
  process.exit(1)
}
clearTimeout(watchdog)

logger.info(
  { role: config.ROLE, port: app.server?.port, database: database.embedded ? 'embedded' : 'DATABASE_URL' },
  serving
    ? `listening on http://${config.HOST}:${app.server?.port}`
    : `worker started; health on port ${app.server?.port}`,
)

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  logger.info({ signal }, 'shutting down: draining requests, stopping workers, closing the database')
  const force = setTimeout(() => process.exit(1), 30_000)
  try {
    await app.stop(false) // stop accepting, let in-flight requests finish
    await stopBackground()
    await database?.close()
    // the spans of the last moments reach the collector before the process ends
    await flushTraces().catch(() => {})
  } finally {
    clearTimeout(force)
    logger.info('stopped')
    flushLogs()
    process.exit(0)
  }
}
started = true
if (stopAskedBy) void shutdown(stopAskedBy)
