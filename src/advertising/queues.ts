import { defineQueue } from '../db/queues'

/** Writes an uploaded performance file, chunk by chunk (resumes after the last committed chunk). */
export const performanceImportQueue = defineQueue<{ importId: string }>(
  'advertising.import-performance',
  { retryLimit: 5, retryBackoff: true, heartbeatSeconds: 10 },
  { formerly: ['advertising.performance-import'] },
)

/**
 * Computes the revenue shares of one calendar month (UTC). Sent by the admin endpoint and the CLI
 * with a period; the monthly schedule sends none and gets the month that just ended.
 */
export const revenueShareQueue = defineQueue<{ period?: string; platformFeeRate?: string }>(
  'advertising.calculate-shares',
  { retryLimit: 5, retryBackoff: true },
  { formerly: ['advertising.revenue-shares'] },
)
