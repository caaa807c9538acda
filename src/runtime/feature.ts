import type { AnyElysia } from 'elysia'
import type { Config } from '../config'
import type { QueueSpec } from '../db/queues'
import type { AtCommitHook } from '../events/at-commit'
import type { Subscriber } from '../events/subscribers'
import type { Worker } from './workers'

/** Bun's own routes (`serve.routes`), served before the app: `app` is the app, for the paths they pass on. */
export type ServeRoutes = (app: () => AnyElysia) => Record<string, unknown>

/**
 * What a feature declares in its index.ts, the one place its wiring is written: the HTTP plugins it
 * serves, the queues it declares (its queues.ts), a worker for each of them, its event subscribers
 * (and the at-commit form of some), and what every serving process starts for it. src/features.ts
 * lists the features; the app, the worker runtime and the CLI read that list.
 */
export type Feature = {
  name: string
  routes?: readonly AnyElysia[]
  serve?: ServeRoutes
  queues?: readonly QueueSpec[]
  workers?: readonly Worker[]
  subscribers?: readonly Subscriber[]
  /** subscribers' work that `emit` does in the emitting transaction (src/events/at-commit.ts) */
  atCommit?: readonly AtCommitHook[]
  /** started in every serving process before pg-boss (caches that listen for changes) */
  start?: (config: Config) => Promise<void>
  /** started in worker processes after the queues' workers; resolves to a function that stops it */
  startInWorkers?: () => Promise<() => Promise<void>>
}

/** A feature's declaration, with its route plugins' types kept (the typed client reads them). */
export const defineFeature = <const F extends Feature>(feature: F): F => feature
