import { type AnyElysia, Elysia } from 'elysia'
import { accountRoutes } from './accounts/routes'
import { campaignRoutes } from './advertising/campaign-routes'
import { revenueShareRoutes } from './advertising/share-routes'
import { barcodeRoutes } from './barcodes/routes'
import { recallRoutes } from './catalog/recall-routes'
import { catalogRoutes } from './catalog/routes'
import { demoRoutes } from './demo/routes'
import { feedRoutes, offerRoutes } from './feeds/routes'
import { healthRoutes } from './health/routes'
import { edge } from './http/edge'
import { exactPaths } from './http/exact-paths'
import { idempotency } from './http/idempotency'
import { docs } from './http/openapi'
import { problems } from './http/problems'
import { requestContext } from './http/request-context'
import { metricsRoutes } from './observability/routes'
import { resolverRoutes, scanServeRoutes } from './resolver/resolver-routes'
import { ruleRoutes } from './resolver/routes'
import { retailerRoutes } from './retailers/routes'
import { searchRoutes } from './search/routes'
import { webhookRoutes } from './webhooks/routes'

/** The HTTP application: shared conventions first, then one plugin per feature. */
export function createApp() {
  // plugins that look at the whole app (its routes, its handler) read it on first use
  let self: AnyElysia | null = null
  const app = new Elysia({
    strictPath: true,
    normalize: false,
    // scans go from Bun's router straight to the resolver (see scanServeRoutes)
    serve: { routes: scanServeRoutes(() => self!) },
  })
    .use(requestContext)
    .use(exactPaths(() => self!.routes))
    .use(problems)
    .use(edge(() => self!))
    // after the edge's checks: a request it refuses never claims its Idempotency-Key
    .use(idempotency(() => self!))
    .use(docs(() => self!))
    .use(healthRoutes)
    .use(metricsRoutes)
    .use(accountRoutes)
    .use(retailerRoutes)
    .use(catalogRoutes)
    .use(recallRoutes)
    .use(barcodeRoutes)
    .use(searchRoutes)
    .use(webhookRoutes)
    .use(feedRoutes)
    .use(offerRoutes)
    .use(ruleRoutes)
    .use(resolverRoutes)
    .use(campaignRoutes)
    .use(revenueShareRoutes)
    .use(demoRoutes)
  self = app
  return app
}

export type App = ReturnType<typeof createApp>

/** What a worker process serves: only the health probes, on the same conventions. */
export function createHealthApp() {
  return new Elysia({ normalize: false }).use(requestContext).use(problems).use(healthRoutes).use(metricsRoutes)
}
