import pino from 'pino'
import { config } from '../config'
import { errorForLog } from './log-errors'

/**
 * The one logger. Never log keys, secrets or request bodies. Writes are synchronous: the line of
 * a crash, or the one just before a kill -9, is in the log when the process dies (a request line
 * costs one write; the HTTP benchmark shows no measurable difference).
 */
const destination = pino.destination({ fd: config.LOG_TARGET === 'stderr' ? 2 : 1, sync: true })

export const logger = pino(
  {
    level: config.LOG_LEVEL,
    base: { service: 'gtin-catalog' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['api_key', 'key', 'headers["x-api-key"]', 'headers["x-admin-token"]'],
    serializers: { err: errorForLog },
  },
  destination,
)

/** Writes out anything still buffered; call before process.exit. */
export function flushLogs() {
  try {
    destination.flushSync()
  } catch {}
}
export type Logger = typeof logger
