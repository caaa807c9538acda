// Liveness and readiness probes, served by API and worker processes alike.
import { defineFeature } from '../runtime/feature'
import { healthRoutes } from './routes'

export { healthRoutes }

export const health = defineFeature({ name: 'health', routes: [healthRoutes] })
