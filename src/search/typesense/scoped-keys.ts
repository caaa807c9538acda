import { config } from '../../config'
import { AppError } from '../../shared/errors'
import type { Collection, SearchInput } from '../types'
import { typesense } from './client'
import { COLLECTIONS } from './schema'
import { filterBy } from './search'

export type SearchKeyInput = Pick<SearchInput, 'excludeAllergens' | 'certifications' | 'excludeSubstances'> & {
  types: Collection[]
  expiresIn: number
}

/**
 * Scoped search-only keys for browsers that query Typesense directly: one per collection, each
 * embedding that collection's `filter_by` (the caller's filters; for retailers, the directory the
 * caller may see) and `expires_at`. Signed by the official client's `generateScopedSearchKey` with
 * TYPESENSE_SEARCH_API_KEY, which must allow only `documents:search` (Typesense refuses scoped keys
 * of other parents). 404 when Typesense or that key is not configured.
 */
export function mintSearchKeys(organizationId: string, input: SearchKeyInput, now = Date.now()) {
  const parent = config.TYPESENSE_SEARCH_API_KEY
  if (!config.TYPESENSE_URL || !parent)
    throw new AppError('not_found', 'scoped search keys need Typesense: TYPESENSE_URL and TYPESENSE_SEARCH_API_KEY')
  const expiresAt = Math.floor(now / 1000) + input.expiresIn
  const filters: SearchInput = { ...input, q: '', limit: 0, organizationId }
  return {
    url: config.TYPESENSE_PUBLIC_URL ?? config.TYPESENSE_URL,
    expires_at: new Date(expiresAt * 1000).toISOString(),
    keys: input.types.map((type) => {
      const filter = filterBy(type, filters)
      const parameters = { ...(filter ? { filter_by: filter } : {}), expires_at: expiresAt }
      return {
        type,
        collection: COLLECTIONS[type].name,
        key: typesense().keys().generateScopedSearchKey(parent, parameters),
        parameters,
      }
    }),
  }
}
