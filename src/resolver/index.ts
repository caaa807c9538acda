// The resolver feature: resolution rules (CRUD) and the public GS1 Digital Link scan, served from
// an in-memory rule index that every process keeps in step through the announce subscriber.
import { defineFeature } from '../runtime/feature'
import { announceQueue } from './queues'
import { ruleIndex } from './rule-index'
import { ruleRoutes } from './rule-routes'
import { resolverRoutes, scanServeRoutes } from './scan-routes'
import { announceSubscriber } from './subscribers'

export { storedUrl } from './rules'

export const resolver = defineFeature({
  name: 'resolver',
  routes: [ruleRoutes, resolverRoutes],
  // scans go from Bun's router straight to the resolver (see scanServeRoutes)
  serve: scanServeRoutes,
  queues: [announceQueue],
  subscribers: [announceSubscriber],
  start: async () => {
    await ruleIndex.listen()
  },
})
