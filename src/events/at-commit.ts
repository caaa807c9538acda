import type { Tx } from '../db/tx'
import type { Subscriber } from './subscribers'
import type { EventType } from './types'

/** An event as `emit` hands it to an at-commit hook: written in this transaction, not committed yet. */
export type EmittedEvent = { id: string; eventType: EventType; organizationId: string | null; subjectId: string }

/**
 * A subscriber's work done by `emit` itself, in the emitting transaction, instead of by the
 * subscriber's job after commit: no dispatch hop, no job, no consumption record, no read of the
 * events back (the webhook fan-out: each of those cost more per event than the deliveries' insert).
 * Its writes commit with the change, exactly like the subscriber's committed with its record.
 *
 * A feature declares it (`atCommit` in its index.ts) next to the subscriber it stands in for, which
 * stays listed: it handles what no hook handled, the events of a process that did not route its
 * emits and those committed before the hook existed. Each dispatch job names the hooks that ran for
 * its events, and dispatch never sends those events to those hooks' subscribers: every event is
 * handled once, by the hook or by the subscriber.
 */
export type AtCommitHook = {
  /** the name of the subscriber it stands in for (its queue's name) */
  subscriber: string
  events: readonly EventType[]
  run: (tx: Tx, events: EmittedEvent[]) => Promise<void>
}

/** The at-commit form of a subscriber: the same event types, `run` in the emitting transaction. */
export const atCommitOf = (s: Subscriber, run: AtCommitHook['run']): AtCommitHook => ({
  subscriber: s.name,
  events: s.events,
  run,
})

/** What `emit` does with the events it writes: the hooks it runs, the types worth a dispatch job. */
export type EmitRoutes = { hooks: readonly AtCommitHook[]; dispatched: ReadonlySet<EventType> }

let routes: EmitRoutes | null = null

/**
 * Set once by each process's runtime (src/runtime/background.ts) from the features it lists: the
 * at-commit hooks, and the types some subscriber still takes through a dispatch job. Until then (a
 * script that never routes) `emit` runs no hook and dispatches every event, the way it always did.
 */
export function routeEmits(subscribers: readonly Subscriber[], hooks: readonly AtCommitHook[]) {
  const byHook = new Set(hooks.flatMap((h) => h.events.map((type) => `${h.subscriber}\0${type}`)))
  const dispatched = new Set(subscribers.flatMap((s) => s.events.filter((type) => !byHook.has(`${s.name}\0${type}`))))
  routes = { hooks, dispatched }
}

/** The routes `routeEmits` set, or null when this process has not routed its emits. */
export const emitRoutes = (): EmitRoutes | null => routes
