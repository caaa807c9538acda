import { eq, sql } from 'drizzle-orm'
import { config } from '../config'
import { webhookEndpoints } from '../db/schema'
import type { Tx } from '../db/tx'
import { retrySchedule } from './retry-schedule'

/**
 * Each endpoint's circuit breaker, kept on its row so every worker process sees the same one.
 * Closed, an endpoint has up to WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight. After
 * WEBHOOK_CIRCUIT_FAILURES failed attempts in a row (errors, timeouts, non-2xx answers) it opens:
 * its deliveries are held back (not attempted, their attempts not counted) for
 * WEBHOOK_CIRCUIT_OPEN_SECONDS (by default as long as a first retry waits, 30 s); then one attempt
 * goes through as a probe (half-open). A failed probe opens it again; any success closes it (settled
 * with the success, attempts.ts). The dispatcher reads this state when it claims.
 */
export type CircuitState = 'closed' | 'open' | 'half_open'

type CircuitColumns = { consecutiveFailures: number; circuitOpenUntil: Date | null }

export const circuitOpenSeconds = () => config.WEBHOOK_CIRCUIT_OPEN_SECONDS ?? retrySchedule()[0] ?? 30

export function circuitState(row: CircuitColumns, now = new Date()): CircuitState {
  if (row.consecutiveFailures < config.WEBHOOK_CIRCUIT_FAILURES) return 'closed'
  return row.circuitOpenUntil && row.circuitOpenUntil > now ? 'open' : 'half_open'
}

/**
 * After a failed attempt, in its transaction: one more failure in a row, the run's start kept, and
 * the circuit opened when this failure reaches the threshold while it is not open already (so the
 * failures of attempts that were in flight when it opened do not push the probe further out).
 * Returns when the current run of failures began.
 */
export async function countFailure(tx: Tx, endpointId: string, at: Date): Promise<Date> {
  const when = at.toISOString()
  const [row] = await tx
    .update(webhookEndpoints)
    .set({
      consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1`,
      failingSince: sql`coalesce(${webhookEndpoints.failingSince}, ${when}::timestamptz)`,
      circuitOpenUntil: sql`case
        when ${webhookEndpoints.consecutiveFailures} + 1 >= ${config.WEBHOOK_CIRCUIT_FAILURES}
          and (${webhookEndpoints.circuitOpenUntil} is null or ${webhookEndpoints.circuitOpenUntil} <= ${when}::timestamptz)
        then ${when}::timestamptz + make_interval(secs => ${circuitOpenSeconds()}::float8)
        else ${webhookEndpoints.circuitOpenUntil} end`,
    })
    .where(eq(webhookEndpoints.id, endpointId))
    .returning({ failingSince: webhookEndpoints.failingSince })
  return row?.failingSince ?? at
}
