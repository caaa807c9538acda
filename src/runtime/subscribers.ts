import type { JobResult } from 'pg-boss'
import { dispatchQueue, eventIdsOf } from '../events/queues'
import { consumeEvents, dispatchEvents, type Subscriber } from '../events/subscribers'
import { logger } from '../shared/logger'
import { bind, type Worker } from './workers'

/**
 * Woken by NOTIFY when a job is sent, fetching again at once while fetches come back full, and
 * polling every second as the floor (retries and partial batches are not announced).
 */
const eager = { pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1, burstWhenBatchFull: true }

/** Past this many events, a fetched batch of subscriber jobs is consumed job by job. */
const MAX_EVENTS_PER_TRANSACTION = 5000

/** Dispatch: up to 100 emits' batches a fetch, fanned out to the queues of the subscribers listed. */
export const dispatchWorker = (subscribers: readonly Subscriber[]): Worker =>
  bind(
    dispatchQueue,
    (jobs) =>
      dispatchEvents(
        subscribers,
        jobs.map((j) => ({ id: j.id, eventIds: eventIdsOf(j.data), atCommit: j.data.atCommit })),
      ),
    { work: { batchSize: 100, ...eager } },
  )

/**
 * A subscriber's worker: a fetched batch of jobs is consumed in one transaction. When that fails,
 * each job settles on its own, and within a job each event is consumed in its own transaction: the
 * events that succeed are recorded as consumed (a retry skips them); the job fails, to be retried
 * and then dead-lettered, only for the events that keep failing.
 */
export function subscriberWorker(subscriber: Subscriber): Worker {
  type EventJob = { id: string; retryCount: number; data: Parameters<typeof eventIdsOf>[0] }
  const one = async (job: EventJob): Promise<JobResult> => {
    let failure: unknown = null
    for (const eventId of eventIdsOf(job.data))
      try {
        await consumeEvents(subscriber, [eventId])
      } catch (err) {
        failure = err
        logger.error(
          { err, subscriber: subscriber.name, event_id: eventId, attempt: job.retryCount + 1 },
          'event subscriber failed; retried, then dead-lettered',
        )
      }
    if (failure === null) return { id: job.id, status: 'completed' }
    return { id: job.id, status: 'failed', output: { message: String((failure as Error)?.message ?? failure) } }
  }
  return bind(
    subscriber.queue,
    async (jobs): Promise<JobResult[]> => {
      const total = jobs.reduce((n, j) => n + eventIdsOf(j.data).length, 0)
      if (total > 1 && total <= MAX_EVENTS_PER_TRANSACTION)
        try {
          await consumeEvents(
            subscriber,
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
            await consumeEvents(subscriber, eventIdsOf(job.data))
            results.push({ id: job.id, status: 'completed' })
            continue
          } catch {
            // one event at a time below
          }
        results.push(await one(job))
      }
      return results
    },
    { work: { batchSize: 50, ...eager, perJobResults: true } },
  )
}

/** The dispatch worker and one worker per subscriber. */
export const eventWorkers = (subscribers: readonly Subscriber[]): Worker[] => [
  dispatchWorker(subscribers),
  ...subscribers.map(subscriberWorker),
]
