import type { Executor } from '../db/tx'
import { searchPostgres } from './postgres'
import { parseQuery } from './query'
import type { SearchInput, SearchRow } from './types'

/** Catalog search: the parsed query answered by PostgreSQL (Typesense when configured). */
export async function search(ex: Executor, input: SearchInput): Promise<SearchRow[]> {
  const parsed = parseQuery(input.q)
  return searchPostgres(ex, input, parsed)
}
