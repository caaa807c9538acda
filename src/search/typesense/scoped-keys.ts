import { createHmac } from 'node:crypto'
import { config } from '../../config'
import { AppError } from '../../shared/errors'
import { logger } from '../../shared/logger'
import type { Collection, SearchInput } from '../types'
import { typesense } from './client'
import { COLLECTIONS } from './schema'
import { filterBy } from './search'

export type SearchKeyInput = Pick<SearchInput, 'excludeAllergens' | 'certifications' | 'excludeSubstances'> & {
  types: Collection[]
  expiresIn: number
}

/**
 * The value of the parent key of one collection's scoped keys, derived from the secret
 * TYPESENSE_SEARCH_API_KEY: every process derives the same keys, and nothing is stored.
 */
export const parentKeyValue = (collection: string, secret: string) =>
  createHmac('sha256', secret).update(`gtin-catalog scoped-key parent\0${collection}`).digest('base64url')

const parents = new Map<string, Promise<string>>()

/**
 * The parent key of a collection's scoped keys: a Typesense key allowed `documents:search` on that
 * one collection only. Typesense checks the collection a scoped key searches against its parent's
 * `collections`, and embedded parameters can narrow a search but never name its collection, so
 * one parent per collection is what keeps a key minted for brands (which embeds no filter) off
 * the retailers collection. Created with the admin key TYPESENSE_API_KEY (which must be allowed
 * `keys:create`) the first time a process needs it; 409 means it exists already.
 */
function parentKey(collection: string, secret: string): Promise<string> {
  const known = parents.get(collection)
  if (known) return known
  const value = parentKeyValue(collection, secret)
  const created = typesense()
    .keys()
    .create({
      description: `gtin-catalog: parent of the scoped search keys of the ${collection} collection`,
      actions: ['documents:search'],
      collections: [collection],
      value,
    })
    .then(
      () => value,
      (err: { httpStatus?: number }) => {
        if (err?.httpStatus === 409) return value
        parents.delete(collection)
        logger.error({ err, collection }, 'Typesense refused the parent key of scoped search keys')
        throw new AppError(
          'service_unavailable',
          'scoped search keys are unavailable: Typesense did not accept their parent key (TYPESENSE_API_KEY must be allowed keys:create)',
          undefined,
          { 'retry-after': '30' },
        )
      },
    )
  parents.set(collection, created)
  return created
}

/**
 * Scoped search-only keys for browsers that query Typesense directly: one per collection, each
 * embedding that collection's `filter_by` (the caller's filters; for retailers, the directory the
 * caller may see) and `expires_at`, signed by the official client's `generateScopedSearchKey`
 * with that collection's own parent key (see `parentKey`), so a key works on its collection alone.
 * 404 when Typesense or TYPESENSE_SEARCH_API_KEY (the secret the parents derive from) is not
 * configured.
 */
export async function mintSearchKeys(organizationId: string, input: SearchKeyInput, now = Date.now()) {
  const secret = config.TYPESENSE_SEARCH_API_KEY
  if (!config.TYPESENSE_URL || !secret)
    throw new AppError('not_found', 'scoped search keys need Typesense: TYPESENSE_URL and TYPESENSE_SEARCH_API_KEY')
  const expiresAt = Math.floor(now / 1000) + input.expiresIn
  const filters: SearchInput = { ...input, q: '', limit: 0, organizationId }
  const keys = []
  for (const type of input.types) {
    const collection = COLLECTIONS[type].name
    const filter = filterBy(type, filters)
    const parameters = { ...(filter ? { filter_by: filter } : {}), expires_at: expiresAt }
    const parent = await parentKey(collection, secret)
    keys.push({ type, collection, key: typesense().keys().generateScopedSearchKey(parent, parameters), parameters })
  }
  return {
    url: config.TYPESENSE_PUBLIC_URL ?? config.TYPESENSE_URL,
    expires_at: new Date(expiresAt * 1000).toISOString(),
    keys,
  }
}
