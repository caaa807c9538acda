import { timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { config } from '../config'
import { isAdmin } from '../http/auth'
import { Binary, errorResponses } from '../http/openapi'
import { AppError } from '../shared/errors'
import { collectDatabaseMetrics } from './collectors'
import { registry } from './metrics'

/** Constant-time check of `Authorization: Bearer <METRICS_TOKEN>`; false whenever it is unset. */
function bearerMatches(header: string | undefined): boolean {
  const expected = config.METRICS_TOKEN
  const sent = header?.match(/^Bearer\s+(\S+)$/i)?.[1]
  if (!expected || !sent) return false
  const a = Buffer.from(sent)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * GET /metrics: Prometheus text for a scraper holding METRICS_TOKEN (as a bearer token) or the
 * admin token. With neither configured, or without either sent, it is 404 like the admin routes:
 * the numbers are the platform's (no organization's data is in them), but load and queue depths
 * are still the operator's business. API and worker processes both serve it (each counts its own
 * requests and deliveries).
 */
export const metricsRoutes = new Elysia({ name: 'metrics' }).get(
  '/metrics',
  async ({ headers }) => {
    if (!bearerMatches(headers.authorization) && !isAdmin(headers['x-admin-token']))
      throw new AppError('not_found', 'no such route')
    await collectDatabaseMetrics()
    return new Response(await registry.metrics(), {
      headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' },
    })
  },
  {
    response: {
      200: Binary(['text/plain'], 'Prometheus text exposition format 0.0.4'),
      ...errorResponses,
    },
    detail: {
      tags: ['Health'],
      operationId: 'getMetrics',
      summary: 'Prometheus metrics',
      description:
        'Prometheus text format (0.0.4). Send `Authorization: Bearer <METRICS_TOKEN>` or the X-Admin-Token header; without a valid one (or with neither configured) 404. Families: gtin_http_request_duration_seconds (method, route template, status), gtin_queue_jobs and gtin_queue_oldest_ready_job_age_seconds (per pg-boss queue), gtin_feed_rows_read_total and gtin_feed_rows_rejected_total, gtin_webhook_delivery_attempts_total (outcome) and gtin_webhook_endpoints (circuit state), gtin_resolver_resolutions_total (outcome), gtin_search_duration_seconds (backend, tier), gtin_db_pool_connections (total, idle, waiting), gtin_metrics_collector_up, and the process metrics (gtin_process_*, gtin_nodejs_*). No label names an organization.',
      security: [{ AdminToken: [] }],
    },
  },
)
