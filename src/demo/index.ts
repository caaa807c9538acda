// The instant-search demo page (GET /demo/search).
import { defineFeature } from '../runtime/feature'
import { demoRoutes } from './routes'

export const demo = defineFeature({ name: 'demo', routes: [demoRoutes] })
