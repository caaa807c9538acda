// Run before a worker starts in docker-compose.yml: in Typesense mode, when the `products`
// collection is missing or empty (a new stack, or a new Typesense volume), fill the search index
// with `search reindex` (the CLI). It never stops the worker from starting: a failure is reported
// and the index can be filled later with `npm run -s cli -- search reindex`.
const url = process.env.TYPESENSE_URL
const key = process.env.TYPESENSE_API_KEY
if (!url || !key) process.exit(0) // search runs on PostgreSQL: nothing to fill

async function productCount(): Promise<number | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${url!.replace(/\/$/, '')}/collections/products`, {
        headers: { 'x-typesense-api-key': key! },
      })
      if (res.status === 404) return 0
      if (res.ok) return ((await res.json()) as { num_documents?: number }).num_documents ?? 0
      console.error(`reindex-if-empty: Typesense answered ${res.status}; not reindexing`)
      return null
    } catch (err) {
      // compose starts the worker once Typesense's port is open; a restart may still race it
      if (attempt >= 10) {
        console.error(`reindex-if-empty: Typesense at ${url} unreachable (${(err as Error).message}); not reindexing`)
        return null
      }
      await Bun.sleep(1000)
    }
  }
}

const count = await productCount()
if (count === 0) {
  console.error('reindex-if-empty: the search index is empty; filling it (search reindex)')
  const cli = Bun.spawn([process.execPath, 'scripts/cli/index.ts', 'search', 'reindex'], {
    stdout: 'inherit',
    stderr: 'inherit',
  })
  const code = await cli.exited
  if (code !== 0) console.error(`reindex-if-empty: search reindex exited with ${code}; the worker starts all the same`)
}
process.exit(0)

export {}
