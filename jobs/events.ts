import type { Job, JobResult, PgBoss } from 'pg-boss'
import { type Consumer, consumeEvents, consumers, dispatchEvents } from '../src/events/consumers'
import { dispatchQueue } from '../src/events/outbox'
import { logger } from '../src/shared/logger'
import { type Binding, bind } from './binding'

type EventJob = Job<{ eventId: string }>

/**
 * Woken by NOTIFY when a job is sent, fetching again at once while fetches come back full, and
 * polling every second as the floor (retries and partial batches are not announced).
 */
const eager = { pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1, burstWhenBatchFull: true }

/** Dispatch: up to 100 events a fetch, fanned out to their consumers' queues. */
export const eventsDispatch: Binding = {
  queue: dispatchQueue,
  work: { batchSize: 100, ...eager },
  handle: (jobs: EventJob[]) => dispatchEvents(jobs.map((j) => j.data.eventId)),
}

/**
 * A consumer's worker: a fetched batch is consumed in one transaction; when that fails, each job
 * is consumed on its own and settles on its own, so one failing event does not fail its batch.
 */
export function consumerBinding(consumer: Consumer): Binding {
  const one = async (job: EventJob): Promise<JobResult> => {
    try {
      await consumeEvents(consumer, [job.data.eventId])
      return { id: job.id, status: 'completed' }
    } catch (err) {
      logger.error(
        { err, consumer: consumer.name, event_id: job.data.eventId, attempt: job.retryCount + 1 },
        'event consumer failed; retried, then dead-lettered',
      )
      return { id: job.id, status: 'failed', output: { message: String((err as Error)?.message ?? err) } }
    }
  }
  return {
    queue: consumer.queue,
    work: { batchSize: 50, ...eager, perJobResults: true },
    handle: async (jobs: EventJob[]): Promise<JobResult[]> => {
      if (jobs.length > 1)
        try {
          await consumeEvents(
            consumer,
            jobs.map((j) => j.data.eventId),
          )
          return jobs.map((job) => ({ id: job.id, status: 'completed' }))
        } catch {
          // fall through: one at a time, each with its own outcome
        }
      const results: JobResult[] = []
      for (const job of jobs) results.push(await one(job))
      return results
    },
  }
}

export const consumerBindings = () => consumers().map(consumerBinding)

/** Binds one consumer at run time (a consumer registered after the workers started). */
export const bindConsumer = (boss: PgBoss, consumer: Consumer) => bind(boss, consumerBinding(consumer))
