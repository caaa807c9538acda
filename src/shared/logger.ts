import pino from 'pino'
import { config } from '../config'
import { activeTraceId } from '../observability/tracing'
import { errorForLog } from './log-errors'
import { LineSink } from './log-sink'
import { isUnavailable } from './unavailable'

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
    // the trace a line was written in (a traced request or job), to find its spans
    mixin: () => {
      const traceId = activeTraceId()
      return traceId ? { trace_id: traceId } : {}
    },
    hooks: {
      logMethod(args, method, level) {
        if (level >= WARN && isUnavailable(errorOf(args)) && !outageLines.admit(level, messageOf(args))) return
        method.apply(this, args)
        if (level >= WARN) destination.flush()
      },
    },
  },
  destination,
)

type LogArgs = Parameters<pino.LogFn>
const errorOf = (args: LogArgs): unknown =>
  args[0] instanceof Error ? args[0] : (args[0] as { err?: unknown } | null)?.err
const messageOf = (args: LogArgs): string =>
  typeof args[0] === 'string' ? args[0] : typeof args[1] === 'string' ? args[1] : ''

/**
 * While PostgreSQL is down, every request, the pool, the listener and pg-boss each report it,
 * tens of lines a second saying the same. A warning or error caused by an unavailable database
 * (src/shared/unavailable.ts) is therefore written at most once per OUTAGE_WINDOW_MS for each
 * level and message; the lines left out are counted, and their count is written at the end of
 * the window as one line of the same level and message with `suppressed: <n>`. Other lines (a
 * bug's 500, each with its request id) are never held back.
 */
export const OUTAGE_WINDOW_MS = 10_000
class OutageLines {
  #windows = new Map<string, { until: number; suppressed: number; timer?: ReturnType<typeof setTimeout> }>()

  admit(level: number, message: string): boolean {
    const kind = `${level}:${message}`
    const now = Date.now()
    const window = this.#windows.get(kind)
    if (!window || now >= window.until) {
      if (this.#windows.size > 1000) this.#forgetExpired(now)
      this.#windows.set(kind, { until: now + OUTAGE_WINDOW_MS, suppressed: 0 })
      return true
    }
    window.suppressed++
    window.timer ??= setTimeout(() => this.#report(kind, level, message), window.until - now).unref()
    return false
  }

  /** The count of a window's held-back lines, as a line that opens the next window. */
  #report(kind: string, level: number, message: string) {
    const window = this.#windows.get(kind)
    if (!window) return
    this.#windows.set(kind, { until: Date.now() + OUTAGE_WINDOW_MS, suppressed: 0 })
    const label = logger.levels.labels[level] as pino.Level
    logger[label]({ suppressed: window.suppressed, window_seconds: OUTAGE_WINDOW_MS / 1000 }, message)
  }

  #forgetExpired(now: number) {
    for (const [kind, window] of this.#windows) if (now >= window.until && !window.timer) this.#windows.delete(kind)
  }
}
const outageLines = new OutageLines()

/** One request log line's fields. */
export type RequestLine = {
  id: string
  method: string
  path: string
  status: number
  durationMs?: number
  /** the request's trace, when it was traced */
  traceId?: string
}

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
  const trace = line.traceId ? `,"trace_id":${quoted(line.traceId)}` : ''
  destination.write(
    `{"level":30,"time":"${isoNow()}"${SERVICE_FIELD}${id}${trace},"method":${quoted(line.method)},"path":${quoted(line.path)},"status":${line.status}${duration}}\n`,
  )
}

/** Writes out anything still buffered; call before process.exit. */
export function flushLogs() {
  try {
    destination.flush()
  } catch {}
}
export type Logger = typeof logger
