import { Elysia, t } from 'elysia'
import { db } from '../db/client'
import { migrationsApplied } from '../db/migrate'
import { errorResponses } from '../http/openapi'
import { serviceUnavailable } from '../http/problems'

const Health = t.Object({ status: t.String(), checks: t.Optional(t.Record(t.String(), t.String())) })

export const healthRoutes = new Elysia({ name: 'health' })
  // the process answers: never asks the database, so a database outage does not get it restarted
  .get('/healthz', () => ({ status: 'ok' }), {
    response: { 200: Health, ...errorResponses },
    detail: { tags: ['Health'], summary: 'Process is up', security: [] },
  })
  .get(
    '/readyz',
    async () => {
      if (!(await migrationsApplied(db).catch(() => false)))
        throw serviceUnavailable('the database is unreachable or its migrations are not all applied')
      return { status: 'ok', checks: { database: 'ok' } }
    },
    {
      response: { 200: Health, ...errorResponses },
      detail: {
        tags: ['Health'],
        summary: 'Database reachable and migrations applied',
        description: '503 problem+json with Retry-After while the database is unreachable or not migrated.',
        security: [],
      },
    },
  )
