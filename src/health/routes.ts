import { Elysia, t } from 'elysia'
import { db } from '../db/client'
import { migrationsApplied } from '../db/migrate'
import { errorResponses } from '../http/openapi'

const Health = t.Object({ status: t.String(), checks: t.Optional(t.Record(t.String(), t.String())) })

export const healthRoutes = new Elysia({ name: 'health' })
  .get('/healthz', () => ({ status: 'ok' }), {
    response: { 200: Health, ...errorResponses },
    detail: { tags: ['Health'], summary: 'Process is up', security: [] },
  })
  .get(
    '/readyz',
    async ({ status }) => {
      const ready = await migrationsApplied(db).catch(() => false)
      const checks = { database: ready ? 'ok' : 'unavailable or not migrated' }
      return ready ? { status: 'ok', checks } : status(503, { status: 'unavailable', checks })
    },
    {
      response: { 200: Health, ...errorResponses, 503: Health },
      detail: { tags: ['Health'], summary: 'Database reachable and migrations applied', security: [] },
    },
  )
