import type { Command } from 'commander'
import { exits, plural } from './command'
import { withDatabase } from './database'
import { progressReporter } from './progress'

export function searchCommands(program: Command) {
  program
    .command('search')
    .description('the search index')
    .command('reindex')
    .description(
      'rebuild every search document (products, brands, retailers) and the word list, with progress; in Typesense mode also upsert them there (missing collections created)',
    )
    .action(exits(reindex))
}

/** `search reindex`: every search document built again from the database, with progress. */
async function reindex(): Promise<number> {
  const { reindexAll } = await import('../../src/search')
  return withDatabase(2, 'none', async (database) => {
    const bars = new Map<string, Awaited<ReturnType<typeof progressReporter>>>()
    const totals = await reindexAll(database.db, async (collection, done, total) => {
      if (!bars.has(collection)) {
        for (const bar of bars.values()) bar.stop()
        bars.set(collection, await progressReporter(total, `indexed ${collection}s`, 'documents'))
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
