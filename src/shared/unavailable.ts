/**
 * Whether an error says a backing service (PostgreSQL above all) cannot be reached or went away,
 * rather than that the request or the code is wrong: the service is unavailable for a while (503,
 * Retry-After), not broken (500). Wrappers (drizzle's query error, AggregateError) are looked into.
 */

/** Socket errors of a connection that could not be made or was cut. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * PostgreSQL's SQLSTATEs of the same: class 08 (connection exception), the server shutting down
 * or crashing (57P01-57P03), and no connection slot left (53300).
 */
const SQLSTATE = /^(08...|57P0[123]|53300)$/

/** node-postgres's own messages for a connection it lost, or could not make in time. */
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/

type Wrapped = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }

export function isUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false
  const e = error as Wrapped
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATE.test(e.code))) return true
  if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true
  if (Array.isArray(e.errors) && e.errors.some((inner) => isUnavailable(inner, depth + 1))) return true
  return isUnavailable(e.cause, depth + 1)
}
