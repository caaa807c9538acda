import type { Executor } from '../db/tx'
import { searchPostgres } from './postgres'
import { parseQuery } from './query'
import { typesenseEnabled } from './typesense/client'
import { searchTypesense } from './typesense/search'
import './typesense/sync' // registers the index consumer in Typesense mode
import type { SearchInput, SearchRow } from './types'

/** Catalog search: the parsed query answered by Typesense when TYPESENSE_URL is set, else PostgreSQL. */
export async function search(ex: Executor, input: SearchInput): Promise<SearchRow[]> {
  const parsed = parseQuery(input.q)
  return typesenseEnabled() ? searchTypesense(input, parsed) : searchPostgres(ex, input, parsed)
}
