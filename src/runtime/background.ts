import type { Config } from '../config'
import { startBoss, stopBoss } from '../db/boss'
import { listener } from '../db/listener'
import { routeEmits } from '../events/at-commit'
import type { Feature } from './feature'
import { createQueues, startWorkers } from './start-workers'
import { eventWorkers } from './subscribers'
import type { Worker } from './workers'

/** Every worker the features declare, with the event dispatch and one worker per subscriber. */
export const workersOf = (features: readonly Feature[]): Worker[] => [
  ...features.flatMap((f) => f.workers ?? []),
  ...eventWorkers(features.flatMap((f) => f.subscribers ?? [])),
]

/**
 * Routes this process's emits by what the features declare: their at-commit hooks run in the
 * emitting transaction, and only events some subscriber still takes by job are dispatched. Every
 * process that emits calls it (startBackground does; a benchmark's emitting process too), so that
 * an event goes the same way whichever process emits it.
 */
export function routeEmitsOf(features: readonly Feature[]) {
  routeEmits(
    features.flatMap((f) => f.subscribers ?? []),
    features.flatMap((f) => f.atCommit ?? []),
  )
}

/**
 * Background parts of a serving process: its emits routed (routeEmitsOf), what the features start
 * (caches listening for changes), the notification listener, pg-boss with every queue created and,
 * for workers, the features' workers, subscribers and worker services. Resolves to a function that
 * stops them.
 */
export async function startBackground(
  config: Config,
  url: string,
  features: readonly Feature[],
  withWorkers: boolean,
): Promise<() => Promise<void>> {
  routeEmitsOf(features)
  for (const feature of features) await feature.start?.(config)
  listener.start(url)
  const boss = await startBoss(url, withWorkers, config.SCHEDULE_INTERVAL_SECONDS)
  const workers = workersOf(features)
  await createQueues(workers)
  const stops: (() => Promise<void>)[] = []
  if (withWorkers) {
    await startWorkers(boss, workers)
    for (const feature of features) if (feature.startInWorkers) stops.push(await feature.startInWorkers())
  }
  return async () => {
    // pg-boss stops its own workers; the features' services stop first
    await Promise.all(stops.map((stop) => stop()))
    await listener.stop()
    await stopBoss()
  }
}
