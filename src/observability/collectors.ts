import { sql } from 'drizzle-orm'
import { Counter, Gauge } from 'prom-client'
import { config } from '../config'
import { boss } from '../db/boss'
import { db, pool } from '../db/client'
import { registry } from './metrics'

/**
 * What the database knows, read when /metrics is scraped, with one cheap statement each: pg-boss's
 * queue counts (kept by its monitor, no scan of the job table), the webhook endpoints' circuits (one
 * row per endpoint), the rows feed imports have read and rejected (one row per chunk of 1,000), and
 * this process's pool. A collector that fails (the database down) leaves its values as they were
 * and reports 0 in gtin_metrics_collector_up: the scrape itself still answers 200.
 */
const collectorUp = new Gauge({
  name: 'gtin_metrics_collector_up',
  help: 'Whether the last scrape could read each collector (1) or kept its previous values (0)',
  labelNames: ['collector'] as const,
  registers: [registry],
})

const queueJobs = new Gauge({
  name: 'gtin_queue_jobs',
  help: 'pg-boss jobs per queue and state (queued = ready + deferred + blocked), as of its last monitor pass',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
})

const queueOldest = new Gauge({
  name: 'gtin_queue_oldest_ready_job_age_seconds',
  help: 'How long the oldest job ready to run in each queue had waited at pg-boss’s last monitor pass',
  labelNames: ['queue'] as const,
  registers: [registry],
})

const endpoints = new Gauge({
  name: 'gtin_webhook_endpoints',
  help: 'Webhook endpoints by health: closed (delivering), open (circuit holding deliveries back), half_open (probing), disabled (switched off)',
  labelNames: ['state'] as const,
  registers: [registry],
})

// totals over every run's finished chunks: counters that every process reports alike
const importRows = new Counter({
  name: 'gtin_feed_rows_read_total',
  help: 'Records feed imports have read (finished chunks)',
  registers: [registry],
})
const importRejected = new Counter({
  name: 'gtin_feed_rows_rejected_total',
  help: 'Records feed imports have rejected (finished chunks)',
  registers: [registry],
})

const poolConnections = new Gauge({
  name: 'gtin_db_pool_connections',
  help: 'This process’s PostgreSQL pool: total and idle connections, and queries waiting for one',
  labelNames: ['state'] as const,
  registers: [registry],
})

async function queues() {
  queueJobs.reset()
  queueOldest.reset()
  for (const queue of await boss.getQueues()) {
    queueJobs.set({ queue: queue.name, state: 'queued' }, queue.queuedCount)
    queueJobs.set({ queue: queue.name, state: 'ready' }, queue.readyCount)
    queueJobs.set({ queue: queue.name, state: 'active' }, queue.activeCount)
    queueJobs.set({ queue: queue.name, state: 'failed' }, queue.failedCount)
    queueOldest.set({ queue: queue.name }, queue.readyOldestSeconds ?? 0)
  }
}

async function endpointHealth() {
  const failures = config.WEBHOOK_CIRCUIT_FAILURES
  const {
    rows: [row],
  } = await db.execute<Record<'closed' | 'open' | 'half_open' | 'disabled', number>>(sql`select
      count(*) filter (where is_active and consecutive_failures < ${failures})::int as closed,
      count(*) filter (where is_active and consecutive_failures >= ${failures} and circuit_open_until > now())::int as open,
      count(*) filter (where is_active and consecutive_failures >= ${failures}
        and (circuit_open_until is null or circuit_open_until <= now()))::int as half_open,
      count(*) filter (where not is_active)::int as disabled
    from webhook_endpoints where deleted_at is null`)
  for (const state of ['closed', 'open', 'half_open', 'disabled'] as const) endpoints.set({ state }, row?.[state] ?? 0)
}

async function imports() {
  const {
    rows: [row],
  } = await db.execute<{ read: string; rejected: string }>(
    sql`select coalesce(sum(read), 0)::bigint as read, coalesce(sum(rejected), 0)::bigint as rejected
      from feed_run_chunks where status = 'done'`,
  )
  importRows.reset()
  importRows.inc(Number(row?.read ?? 0))
  importRejected.reset()
  importRejected.inc(Number(row?.rejected ?? 0))
}

function poolUsage() {
  poolConnections.set({ state: 'total' }, pool?.totalCount ?? 0)
  poolConnections.set({ state: 'idle' }, pool?.idleCount ?? 0)
  poolConnections.set({ state: 'waiting' }, pool?.waitingCount ?? 0)
}

const COLLECTORS: Record<string, () => Promise<void> | void> = {
  queues,
  webhook_endpoints: endpointHealth,
  feed_imports: imports,
  db_pool: poolUsage,
}

/** Reads every collector's values; each that fails keeps its previous values and reports down. */
export async function collectDatabaseMetrics() {
  await Promise.all(
    Object.entries(COLLECTORS).map(async ([collector, collect]) => {
      try {
        await collect()
        collectorUp.set({ collector }, 1)
      } catch {
        collectorUp.set({ collector }, 0)
      }
    }),
  )
}
