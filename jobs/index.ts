import type { PgBoss, Queue, WorkHandler } from 'pg-boss'

/** One module per queue (file name = queue name); later features add theirs here. */
export type JobModule = {
  name: string
  options?: Omit<Queue, 'name'>
  handle: WorkHandler<any>
}

export const JOBS: JobModule[] = []

export async function startWorkers(boss: PgBoss): Promise<void> {
  for (const job of JOBS) {
    await boss.createQueue(job.name, job.options)
    await boss.work(job.name, job.handle)
  }
}
