import { PgBoss } from 'pg-boss'

// Bound once by startBoss(); ES module live binding.
export let boss: PgBoss

export async function startBoss(url: string): Promise<PgBoss> {
  boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 4 })
  boss.on('error', () => {})
  await boss.start()
  return boss
}

export async function stopBoss(): Promise<void> {
  await boss?.stop({ graceful: true, timeout: 10_000 })
}
