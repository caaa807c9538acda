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
/** The `service` field of every line. */
const SERVICE = 'gtin-catalog'
// lines of the last turn before a normal exit (process.exit skips the pending setImmediate)
process.on('exit', () => destination.flush())

export const logger = pino(
  {
    level: config.LOG_LEVEL,
    base: { service: SERVICE },
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

/** One request log line's fields. */
export type RequestLine = { id: string; method: string; path: string; status: number; durationMs?: number }

/**
 * The request log: one info line per request, in the logger's own format (level, ISO time,
 * service, then the fields), written by hand: at a resolver's request rate pino's general
 * serialisation was the largest single cost of a request (scripts/bench/resolve.ts). At that
 * rate every allocation shows in the collector's pauses, so the time string is made once a
 * millisecond and a field that needs no escaping is quoted as it is.
 */
const SERVICE_FIELD = `,"service":${JSON.stringify(SERVICE)}`
/** Printable ASCII less `"` and `\`: a JSON string holds these as they are. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const quoted = (s: string) => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s))
let clockMs = Number.NaN
let clockText = ''
/** Now as ISO 8601 text; requests of one millisecond share it. */
function isoNow(): string {
  const ms = Date.now()
  if (ms !== clockMs) {
    clockMs = ms
    clockText = new Date(ms).toISOString()
  }
  return clockText
}

export function logRequestLine(line: RequestLine) {
  if (!logger.isLevelEnabled('info')) return
  const id = line.id ? `,"request_id":${quoted(line.id)}` : ''
  const duration = line.durationMs === undefined ? '' : `,"duration_ms":${line.durationMs}`
  destination.write(
    `{"level":30,"time":"${isoNow()}"${SERVICE_FIELD}${id},"method":${quoted(line.method)},"path":${quoted(line.path)},"status":${line.status}${duration}}\n`,
  )
}

/** Writes out anything still buffered; call before process.exit. */
export function flushLogs() {
  try {
    destination.flush()
  } catch {}
}
export type Logger = typeof logger
