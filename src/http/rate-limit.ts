import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible'
import { pool } from '../db/client'
import { AppError } from '../shared/errors'
import { logger } from '../shared/logger'

/**
 * A fixed-window limit shared by every API process on the database (rate-limiter-flexible's
 * PostgreSQL store, table `rate_limits`): one upsert per counted request. A key that has used its
 * points is then refused from memory until its window ends, without a query. If the store cannot
 * be reached the request is let through (and logged): the catalog stays searchable.
 */
/** `what` names the counted requests in the 429 message ("anonymous searches"). */
export type Limit = { name: string; points: number; seconds: number; what: string }
export type LimitState = { limit: number; remaining: number; resetSeconds: number }

const limiters = new Map<string, RateLimiterPostgres>()

function limiterOf(limit: Limit): RateLimiterPostgres {
  const name = `${limit.name}:${limit.points}/${limit.seconds}`
  let limiter = limiters.get(name)
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      keyPrefix: name,
      points: limit.points,
      duration: limit.seconds,
      inMemoryBlockOnConsumed: limit.points + 1,
      clearExpiredByTimeout: true,
    })
    limiters.set(name, limiter)
  }
  return limiter
}

export const rateLimitHeaders = (s: LimitState): Record<string, string> => ({
  'ratelimit-limit': String(s.limit),
  'ratelimit-remaining': String(s.remaining),
  'ratelimit-reset': String(s.resetSeconds),
})

/** Counts one request of `key`; throws 429 `rate_limited` past the limit. */
export async function consume(limit: Limit, key: string): Promise<LimitState | null> {
  try {
    const res = await limiterOf(limit).consume(key)
    return { limit: limit.points, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) }
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) {
      logger.warn({ err }, 'rate limit store unavailable; request let through')
      return null
    }
    const state = { limit: limit.points, remaining: 0, resetSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) }
    throw new AppError(
      'rate_limited',
      `at most ${limit.points} ${limit.what} in ${limit.seconds} s from one address; retry in ${state.resetSeconds} s, or send an API key`,
      undefined,
      { 'retry-after': String(state.resetSeconds), ...rateLimitHeaders(state) },
    )
  }
}
