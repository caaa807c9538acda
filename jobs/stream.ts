import type { Job, PgBoss } from 'pg-boss'
import type { QueueDef } from '../src/db/queues'
import { logger } from '../src/shared/logger'

/**
 * A queue worked as a stream: up to `maxInFlight` jobs run at once, each settled on its own, and a
 * free slot is refilled at once. pg-boss's `work` hands a handler a batch and waits for all of it,
 * so one slow job (a webhook receiver taking its full timeout) would hold up the fast ones fetched
 * with it; here it holds only its own slot. `groupConcurrency` caps the jobs of one group (one
 * endpoint) active across every process, so a slow group cannot take every slot either.
 */
export type StreamBinding<P extends object> = {
  queue: QueueDef<P>
  maxInFlight: number
  groupConcurrency?: number
  /** Settles one job: resolving completes it, throwing fails it (pg-boss retries it). */
  handleOne: (job: Job<P>) => Promise<void>
}

const IDLE_POLL_MS = 200
const FLUSH_MS = 10
/** Below the queue's heartbeatSeconds: a killed process's jobs are retried, a live one's are not. */
const HEARTBEAT_MS = 4000

/** Starts the stream; the returned function stops fetching and waits for the jobs in flight. */
export function startStream<P extends object>(boss: PgBoss, binding: StreamBinding<P>): () => Promise<void> {
  const { queue, maxInFlight, groupConcurrency, handleOne } = binding
  const running = new Map<string, Promise<void>>()
  let completed: string[] = []
  let stopped = false
  let wake: (() => void) | null = null
  const nap = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(done, ms)
      wake = () => {
        clearTimeout(timer)
        done()
      }
    }).finally(() => {
      wake = null
    })

  const flush = async () => {
    if (completed.length === 0) return
    const ids = completed
    completed = []
    await boss
      .complete(queue.name, ids)
      .catch((err) => logger.error({ err, queue: queue.name }, 'completing jobs failed'))
  }
  const flusher = setInterval(() => void flush(), FLUSH_MS)
  const heartbeat = setInterval(() => {
    if (running.size) void boss.touch(queue.name, [...running.keys()]).catch(() => {})
  }, HEARTBEAT_MS)

  const run = (job: Job<P>) => {
    const settled = handleOne(job)
      .then(
        () => void completed.push(job.id),
        async (err) => {
          logger.error({ err, queue: queue.name, job_id: job.id }, 'job failed; pg-boss retries it')
          await boss.fail(queue.name, job.id, { message: String(err?.message ?? err) }).catch(() => {})
        },
      )
      .finally(() => {
        running.delete(job.id)
        wake?.()
      })
    running.set(job.id, settled)
  }

  const loop = (async () => {
    while (!stopped) {
      const free = maxInFlight - running.size
      let fetched = 0
      if (free > 0) {
        try {
          const jobs = await boss.fetch<P>(queue.name, { batchSize: Math.min(free, 100), groupConcurrency })
          fetched = jobs.length
          for (const job of jobs) run(job)
        } catch (err) {
          if (!stopped) logger.error({ err, queue: queue.name }, 'fetching jobs failed; trying again')
        }
      }
      // a full fetch means more may be waiting; otherwise wait for a free slot or the next poll
      if (stopped || (fetched > 0 && fetched === free)) continue
      await nap(free > 0 ? IDLE_POLL_MS : 1000)
    }
  })()

  return async () => {
    stopped = true
    wake?.()
    await loop
    await Promise.allSettled(running.values())
    clearInterval(flusher)
    clearInterval(heartbeat)
    await flush()
  }
}
