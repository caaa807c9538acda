import { createApp, createHealthApp } from './app'
import { config } from './config'
import { openDatabase, startBackground } from './runtime'
import { flushLogs, logger } from './shared/logger'

const database = await openDatabase(config)
const serving = config.ROLE !== 'worker'
const stopBackground = await startBackground(config, database.url, config.ROLE !== 'api')
// A worker serves only /healthz and /readyz, so that it can be probed like the API.
const app = (serving ? createApp() : createHealthApp()).listen({
  port: config.PORT,
  hostname: config.HOST,
  maxRequestBodySize: 32 * 1024 * 1024,
})

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
    await database.close()
  } finally {
    clearTimeout(force)
    logger.info('stopped')
    flushLogs()
    process.exit(0)
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGHUP', () => void shutdown('SIGHUP'))
