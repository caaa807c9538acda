import { accounts } from './accounts'
import { advertising } from './advertising'
import { barcodes } from './barcodes'
import { catalog } from './catalog'
import { demo } from './demo'
import { feeds } from './feeds'
import { health } from './health'
import { observability } from './observability'
import { resolver } from './resolver'
import { retailers } from './retailers'
import { search } from './search'
import { webhooks } from './webhooks'

/**
 * The one list of features. The app serves their routes in this order (src/app.ts), every process
 * starts what they declare and creates their queues, worker processes run their workers and
 * subscribers (src/runtime/), and the CLI reads the same list. A feature not listed here has no
 * routes, workers or subscribers anywhere: nothing is registered by importing a file.
 */
export const features = [
  health,
  observability,
  accounts,
  retailers,
  catalog,
  barcodes,
  search,
  webhooks,
  feeds,
  resolver,
  advertising,
  demo,
] as const
