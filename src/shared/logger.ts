import pino from 'pino'
import { config } from '../config'

/** The one logger. Never log keys, secrets or request bodies. */
// Asynchronous writes keep logging off the request path; shutdown calls flushLogs() before exiting.
const destination = pino.destination({ fd: config.LOG_TARGET === 'stderr' ? 2 : 1, sync: false, minLength: 4096 })

export const logger = pino(
  {
    level: config.LOG_LEVEL,
    base: { service: 'gtin-catalog' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['api_key', 'key', 'headers["x-api-key"]', 'headers["x-admin-token"]'],
  },
  destination,
)

/** Writes out buffered log lines; call before process.exit. */
export function flushLogs() {
  try {
    destination.flushSync()
  } catch {}
}
export type Logger = typeof logger
