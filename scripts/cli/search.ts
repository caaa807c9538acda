import { progressReporter } from './progress'

export const searchUsage = 'usage: cli search reindex   (Typesense mode: every product, brand and retailer upserted)'

/** `search reindex`: a full rebuild of the Typesense collections from the database, with progress. */
export async function searchCommand(argv: string[]): Promise<number> {
  if (argv[0] !== 'reindex' || argv.length > 1) {
    console.error(searchUsage)
    return 2
  }
  const { config } = await import('../../src/config')
  if (!config.TYPESENSE_URL) {
    console.error('search reindex: TYPESENSE_URL is not set; PostgreSQL search needs no index rebuild')
    return 2
  }
  const { openDatabase } = await import('../../src/runtime')
  const { reindexAll } = await import('../../src/search/typesense/sync')
  const database = await openDatabase(config, 2)
  try {
    const bars = new Map<string, Awaited<ReturnType<typeof progressReporter>>>()
    const totals = await reindexAll(database.db, async (collection, done, total) => {
      if (!bars.has(collection)) {
        for (const bar of bars.values()) bar.stop()
        bars.set(collection, await progressReporter(total, `indexed ${collection}s`))
      }
      bars.get(collection)!.update(done)
    })
    for (const bar of bars.values()) bar.stop()
    console.log(`indexed ${totals.product} products, ${totals.brand} brands, ${totals.retailer} retailers`)
    return 0
  } finally {
    await database.close()
  }
}
