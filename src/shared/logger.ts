import pino from 'pino'
import { config } from '../config'

/** The one logger. Never log keys, secrets or request bodies. */
export const logger = pino(
  {
    level: config.LOG_LEVEL,
    base: { service: 'gtin-catalog' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: ['api_key', 'key', 'headers["x-api-key"]', 'headers["x-admin-token"]'],
  },
  pino.destination({ fd: config.LOG_TARGET === 'stderr' ? 2 : 1, sync: true }),
)
export type Logger = typeof logger
