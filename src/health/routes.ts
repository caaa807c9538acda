import { Elysia, t } from 'elysia'
import { db } from '../db/client'
import { migrationsApplied } from '../db/migrate'
import { errorResponses, Problem } from '../http/openapi'
import { serviceUnavailable } from '../http/problems'

const Health = t.Object({ status: t.String(), checks: t.Optional(t.Record(t.String(), t.String())) })

export const healthRoutes = new Elysia({ name: 'health' })
  // the process answers: never asks the database, so a database outage does not get it restarted
  .get('/healthz', () => ({ status: 'ok' }), {
    response: { 200: Health, ...errorResponses },
    detail: { tags: ['Health'], summary: 'Check that the process is up', security: [] },
  })
  .get(
    '/readyz',
    async () => {
      if (!(await migrationsApplied(db).catch(() => false)))
        throw serviceUnavailable('the database is unreachable or its migrations are not all applied')
      return { status: 'ok', checks: { database: 'ok' } }
    },
    {
      // 503 is this route's answer, not only a dependency's failure: listed on its own
      response: { 200: Health, ...errorResponses, 503: Problem },
      detail: {
        tags: ['Health'],
        summary: 'Check that the service is ready',
        description:
          '200 while the database answers and every migration is applied; otherwise 503 `service_unavailable` (application/problem+json) with Retry-After, so a load balancer takes the process out of rotation until it is ready.',
        security: [],
      },
    },
  )
