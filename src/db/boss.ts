import { PgBoss } from 'pg-boss'
import { logger } from '../shared/logger'

// Bound once by startBoss(); ES module live binding.
export let boss: PgBoss

/**
 * pg-boss for every process: API processes only send (no maintenance or schedules), workers
 * also supervise queues, run handlers and are woken by NOTIFY when a job is sent.
 */
export async function startBoss(
  url: string,
  worker: boolean,
  /** SCHEDULE_INTERVAL_SECONDS: how often schedules are checked (passed in: src/db reads no configuration) */
  scheduleIntervalSeconds: number,
): Promise<PgBoss> {
  boss = new PgBoss({
    connectionString: url,
    schema: 'pgboss',
    max: 4,
    supervise: worker,
    schedule: worker,
    useListenNotify: worker,
    // find jobs of dead workers (missed heartbeats) within seconds
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
    cronMonitorIntervalSeconds: scheduleIntervalSeconds,
    cronWorkerIntervalSeconds: Math.min(5, scheduleIntervalSeconds),
  })
  boss.on('error', (err) => logger.error({ err }, 'pg-boss error'))
  boss.on('warning', (warning) => logger.warn({ warning }, 'pg-boss warning'))
  await boss.start()
  return boss
}

export async function stopBoss(): Promise<void> {
  await boss?.stop({ graceful: true, timeout: 10_000 })
}
