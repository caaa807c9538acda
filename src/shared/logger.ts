import pino from 'pino'
import { config } from '../config'
import { errorForLog } from './log-errors'
import { LineSink } from './log-sink'

/**
 * The one logger. Never log keys, secrets or request bodies. Info and debug lines (the request
 * log) are written once per event-loop turn, together; a warn, error or fatal line is written
 * before the call returns, with whatever was gathered before it, so the line of a crash, or one
 * just before a kill -9, is in the log when the process dies.
 */
const destination = new LineSink(config.LOG_TARGET === 'stderr' ? 2 : 1)
const WARN = 40
// lines of the last turn before a normal exit (process.exit skips the pending setImmediate)
process.on('exit', () => destination.flush())

export const logger = pino(
  {
    level: config.LOG_LEVEL,
    base: { service: 'gtin-catalog' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['api_key', 'key', 'headers["x-api-key"]', 'headers["x-admin-token"]'],
    serializers: { err: errorForLog },
    hooks: {
      logMethod(args, method, level) {
        method.apply(this, args)
        if (level >= WARN) destination.flush()
      },
    },
  },
  destination,
)

/** Writes out anything still buffered; call before process.exit. */
export function flushLogs() {
  try {
    destination.flush()
  } catch {}
}
export type Logger = typeof logger
