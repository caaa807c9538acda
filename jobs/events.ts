import type { Job, JobResult, PgBoss } from 'pg-boss'
import {
  type Consumer,
  consumeEvents,
  consumers,
  dispatchEvents,
  type EventJobData,
  eventIdsOf,
} from '../src/events/consumers'
import { dispatchQueue } from '../src/events/outbox'
import { logger } from '../src/shared/logger'
import { type Binding, bind } from './binding'

type EventJob = Job<EventJobData>

/**
 * Woken by NOTIFY when a job is sent, fetching again at once while fetches come back full, and
 * polling every second as the floor (retries and partial batches are not announced).
 */
const eager = { pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1, burstWhenBatchFull: true }

/** Past this many events, a fetched batch of consumer jobs is consumed job by job. */
const MAX_EVENTS_PER_TRANSACTION = 5000

/** Dispatch: up to 100 emits' batches a fetch, fanned out to their consumers' queues. */
export const eventsDispatch: Binding = {
  queue: dispatchQueue,
  work: { batchSize: 100, ...eager },
  handle: (jobs: EventJob[]) => dispatchEvents(jobs.map((j) => ({ id: j.id, eventIds: eventIdsOf(j.data) }))),
}

/**
 * A consumer's worker: a fetched batch of jobs is consumed in one transaction. When that fails,
 * each job settles on its own, and within a job each event is consumed in its own transaction: the
 * events that succeed are recorded as consumed (a retry skips them); the job fails, to be retried
 * and then dead-lettered, only for the events that keep failing.
 */
export function consumerBinding(consumer: Consumer): Binding {
  const one = async (job: EventJob): Promise<JobResult> => {
    let failure: unknown = null
    for (const eventId of eventIdsOf(job.data))
      try {
        await consumeEvents(consumer, [eventId])
      } catch (err) {
        failure = err
        logger.error(
          { err, consumer: consumer.name, event_id: eventId, attempt: job.retryCount + 1 },
          'event consumer failed; retried, then dead-lettered',
        )
      }
    if (failure === null) return { id: job.id, status: 'completed' }
    return { id: job.id, status: 'failed', output: { message: String((failure as Error)?.message ?? failure) } }
  }
  return {
    queue: consumer.queue,
    work: { batchSize: 50, ...eager, perJobResults: true },
    handle: async (jobs: EventJob[]): Promise<JobResult[]> => {
      const total = jobs.reduce((n, j) => n + eventIdsOf(j.data).length, 0)
      if (total > 1 && total <= MAX_EVENTS_PER_TRANSACTION)
        try {
          await consumeEvents(
            consumer,
            jobs.flatMap((j) => eventIdsOf(j.data)),
          )
          return jobs.map((job) => ({ id: job.id, status: 'completed' }))
        } catch {
          // fall through: one at a time, each with its own outcome
        }
      const results: JobResult[] = []
      for (const job of jobs) {
        const size = eventIdsOf(job.data).length
        if (total > MAX_EVENTS_PER_TRANSACTION && size > 1 && size <= MAX_EVENTS_PER_TRANSACTION)
          try {
            await consumeEvents(consumer, eventIdsOf(job.data))
            results.push({ id: job.id, status: 'completed' })
            continue
          } catch {
            // one event at a time below
          }
        results.push(await one(job))
      }
      return results
    },
  }
}

export const consumerBindings = () => consumers().map(consumerBinding)

/** Binds one consumer at run time (a consumer registered after the workers started). */
export const bindConsumer = (boss: PgBoss, consumer: Consumer) => bind(boss, consumerBinding(consumer))
