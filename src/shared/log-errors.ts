/**
 * How an error appears in a log line: what failed and where, never the values it failed on.
 * Drizzle's query errors carry the SQL parameters (emails, names, request values) in `params` and
 * in their message; PostgreSQL's `detail` repeats key values, and data errors (SQLSTATE classes
 * 22 and 23) quote the offending input. Those are left out; any email-like text is masked too.
 */

type Loggable = {
  type: string
  message: string
  stack?: string
  code?: string
  table?: string
  column?: string
  constraint?: string
  routine?: string
  cause?: Loggable
}

const EMAIL = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[A-Za-z]{2,}/g
const QUOTED = /"[^"]*"|'[^']*'/g
const scrub = (text: string) => text.replace(EMAIL, '[email]')

type ErrorLike = Error & Record<string, unknown>

/** A PostgreSQL error (from pg): SQLSTATE and the object names, without values. */
function databaseFields(e: ErrorLike): Partial<Loggable> | null {
  if (typeof e.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code) || !('severity' in e)) return null
  const fields: Partial<Loggable> = { code: e.code }
  for (const key of ['table', 'column', 'constraint', 'routine'] as const)
    if (typeof e[key] === 'string') fields[key] = e[key] as string
  return fields
}

export function errorForLog(error: unknown, depth = 0): Loggable | unknown {
  if (!(error instanceof Error)) return typeof error === 'string' ? scrub(error) : error
  const e = error as ErrorLike
  const db = databaseFields(e)
  // data errors quote the input they refused; keep the sentence, drop the values
  const dataError = db?.code !== undefined && /^2[23]/.test(db.code)
  let message = dataError ? e.message.replace(QUOTED, '"…"') : e.message
  // Drizzle: "Failed query: <sql>\nparams: <values>"; the SQL is ours, the parameters are not
  if ('params' in e && 'query' in e) message = `query failed: ${String(e.query).slice(0, 500)}`
  // the stack repeats the message (parameters included): keep only its frames
  const at = (e.stack ?? '').search(/^\s+at /m)
  const frames = at === -1 ? undefined : e.stack!.slice(at)
  const out: Loggable = {
    type: e.constructor?.name && e.constructor.name !== 'Error' ? e.constructor.name : e.name || 'Error',
    message: scrub(message),
    ...(frames ? { stack: scrub(`${e.name}: ${message}\n${frames}`) } : {}),
    ...db,
  }
  if (e.cause !== undefined && depth < 3) out.cause = errorForLog(e.cause, depth + 1) as Loggable
  return out
}
