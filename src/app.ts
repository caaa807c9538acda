import { type AnyElysia, Elysia } from 'elysia'
import { features } from './features'
import { healthRoutes } from './health'
import { edge } from './http/edge'
import { exactPaths } from './http/exact-paths'
import { idempotency } from './http/idempotency'
import { docs } from './http/openapi'
import { problems } from './http/problems'
import { requestContext } from './http/request-context'
import { metricsRoutes } from './observability'
import type { Feature } from './runtime/feature'

/** The route plugins of a list of features, in order, each with its own type (for the typed client). */
type RoutesOf<F extends readonly Feature[]> = F extends readonly [infer Head, ...infer Rest extends readonly Feature[]]
  ? [...(Head extends { routes: readonly AnyElysia[] } ? Head['routes'] : []), ...RoutesOf<Rest>]
  : []

// every feature's route plugins, in the list's order
const featureRoutes = features.flatMap((f): readonly AnyElysia[] => f.routes ?? []) as RoutesOf<typeof features>

/** The HTTP application: shared conventions first, then the routes of every feature in src/features.ts. */
export function createApp() {
  // plugins that look at the whole app (its routes, its handler) read it on first use
  let self: AnyElysia | null = null
  const serve = Object.assign({}, ...features.map((f: Feature) => f.serve?.(() => self!) ?? {}))
  const app = new Elysia({
    strictPath: true,
    normalize: false,
    // routes Bun serves itself before the app (the resolver's scans)
    serve: { routes: serve },
  })
    .use(requestContext)
    .use(exactPaths(() => self!.routes))
    .use(problems)
    .use(edge(() => self!))
    // after the edge's checks: a request it refuses never claims its Idempotency-Key
    .use(idempotency(() => self!))
    .use(docs(() => self!))
    .use(featureRoutes)
  self = app
  return app
}

export type App = ReturnType<typeof createApp>

/** What a worker process serves: only the health probes, on the same conventions. */
export function createHealthApp() {
  return new Elysia({ normalize: false }).use(requestContext).use(problems).use(healthRoutes).use(metricsRoutes)
}
