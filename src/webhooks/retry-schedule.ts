import { config } from '../config'

/**
 * The published schedule: after the first attempt fails, retries follow 30 s, 2 min, 10 min, 1 h,
 * 4 h, 12 h and 24 h later (8 attempts over about 41.6 hours), each delay jittered by ±10 % so a
 * receiver that comes back is not hit by every queued delivery at once. WEBHOOK_RETRY_SCHEDULE
 * replaces it (tests run it in fractions of a second).
 */
export const retrySchedule = (): number[] => config.WEBHOOK_RETRY_SCHEDULE.split(',').map(Number)

/**
 * Milliseconds before the next attempt after `failedAttempts` attempts have failed, or null when
 * the schedule is spent (the delivery has failed). A `Retry-After` (429/503) is honoured up to the
 * schedule's longest delay: the wait is the longer of the two.
 */
export function nextRetryDelayMs(
  failedAttempts: number,
  retryAfterSeconds: number | null,
  schedule: number[] = retrySchedule(),
  random: () => number = Math.random,
): number | null {
  const base = schedule[failedAttempts - 1]
  if (base === undefined) return null
  const jittered = base * (0.9 + 0.2 * random())
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds, Math.max(...schedule))
  return Math.round(Math.max(jittered, asked) * 1000)
}
