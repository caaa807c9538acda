import type { Command } from 'commander'
import { exits, plural } from './command'
import { withDatabase } from './database'
import { progressReporter } from './progress'

export function searchCommands(program: Command) {
  program
    .command('search')
    .description('the search index')
    .command('reindex')
    .description('Typesense mode: upsert every product, brand and retailer into the collections, with progress')
    .action(exits(reindex))
}

/** `search reindex`: a full rebuild of the Typesense collections from the database, with progress. */
async function reindex(): Promise<number> {
  const { config } = await import('../../src/config')
  if (!config.TYPESENSE_URL) {
    console.error('search reindex: TYPESENSE_URL is not set; PostgreSQL search needs no index rebuild')
    return 2
  }
  const { reindexAll } = await import('../../src/search/typesense/sync')
  return withDatabase(2, 'none', async (database) => {
    const bars = new Map<string, Awaited<ReturnType<typeof progressReporter>>>()
    const totals = await reindexAll(database.db, async (collection, done, total) => {
      if (!bars.has(collection)) {
        for (const bar of bars.values()) bar.stop()
        bars.set(collection, await progressReporter(total, `indexed ${collection}s`))
      }
      bars.get(collection)!.update(done)
    })
    for (const bar of bars.values()) bar.stop()
    console.log(
      `indexed ${plural(totals.product, 'product')}, ${plural(totals.brand, 'brand')}, ${plural(totals.retailer, 'retailer')}`,
    )
    return 0
  })
}
