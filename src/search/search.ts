import type { Executor } from '../db/tx'
import { observeSearch } from '../observability/metrics'
import { searchPostgres } from './postgres'
import { parseQuery } from './query'
import type { SearchInput, SearchRow } from './types'
import { typesenseEnabled } from './typesense/client'
import { searchTypesense } from './typesense/search'

/** Catalog search: the parsed query answered by Typesense when TYPESENSE_URL is set, else PostgreSQL. */
export async function search(ex: Executor, input: SearchInput): Promise<SearchRow[]> {
  const parsed = parseQuery(input.q)
  const began = performance.now()
  const typesense = typesenseEnabled()
  const rows = await (typesense ? searchTypesense(input, parsed) : searchPostgres(ex, input, parsed))
  // latency by backend and by the tier that answered (metrics: gtin_search_duration_seconds)
  observeSearch(typesense ? 'typesense' : 'postgres', rows[0]?.match, (performance.now() - began) / 1000)
  return rows
}
