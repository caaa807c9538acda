// The retailers feature: canonical and private retailers, and which of them an organization sees.
import { defineFeature } from '../runtime/feature'
import { retailerRoutes } from './routes'

export { isVisibleRetailer, visibleRetailerIds } from './retailers'

export const retailers = defineFeature({ name: 'retailers', routes: [retailerRoutes] })
