// The accounts feature: organizations, members and API keys. Other features authenticate callers
// with its keys (src/http/auth.ts) and check roles.
import { defineFeature } from '../runtime/feature'
import { keyCache, listenForRevocations } from './key-cache'
import { accountRoutes } from './routes'

export { authenticate, knownCaller } from './api-keys'
export type { Caller } from './key-cache'
export { createOrganization } from './organizations'
export { type ApiKeyRole, roleAllows } from './roles'

export const accounts = defineFeature({
  name: 'accounts',
  routes: [accountRoutes],
  // every process caches keys; a revocation anywhere reaches them all on the listener
  start: async (config) => {
    keyCache.configure(config.KEY_CACHE_TTL)
    await listenForRevocations()
  },
})
