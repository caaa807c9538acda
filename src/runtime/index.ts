// The worker runtime: opens the database, starts what src/features.ts lists (workers, subscribers,
// listeners) and binds handlers to queues. Features import `bind` from ./workers; the process
// entries (main.ts, the CLI, the test preload) import this index.
export { routeEmitsOf, startBackground, workersOf } from './background'
export { type Database, openDatabase } from './database'
export type { Feature } from './feature'
export { createQueues, startWorker, startWorkers } from './start-workers'
export { dispatchWorker, eventWorkers, subscriberWorker } from './subscribers'
export { bind, failingOnLastAttempt, type Worker } from './workers'
