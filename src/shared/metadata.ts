import { t } from 'elysia'
import { invalidField } from './errors'
import { Chars } from './schema-types'

export type Metadata = Record<string, string>

// keys: 1-40 characters, a surrogate pair (an emoji) counting as one; the two alternatives never
// overlap, so a failing match cannot backtrack exponentially
const KEY = '^(?:[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|[^\\uD800-\\uDFFF\\n\\r\\u2028\\u2029]){1,40}$'
const MetadataObject = t.Record(t.String({ pattern: KEY }), Chars(500), {
  additionalProperties: false,
  maxProperties: 50,
  description: 'Developer key/value data: at most 50 keys, keys 1-40 characters, string values up to 500 characters.',
})

/** Metadata as the API returns it. */
export const MetadataOut = MetadataObject

/**
 * Metadata on write: `{}` or `null` clears it, a key whose value is `""` is deleted,
 * keys left out of the request keep their stored value (spec Conventions).
 */
export const MetadataIn = t.Union(
  [
    // a write may delete keys while it adds others: the 50-key limit applies to the result
    t.Record(t.String({ pattern: KEY }), Chars(500), { additionalProperties: false, maxProperties: 100 }),
    t.Null(),
  ],
  {
    description:
      'Merged into the stored metadata: {} or null clears it; a key set to "" is deleted; omitted keys are kept. The result may have at most 50 keys (a write may name up to 100, deleting some); keys 1-40 characters, values up to 500 characters.',
  },
)

/** The metadata to store after applying a write to what is stored now; 422 past 50 keys. */
export function mergeMetadata(stored: Metadata, patch: Metadata | null | undefined, field = 'metadata'): Metadata {
  if (patch === undefined) return stored
  if (patch === null || Object.keys(patch).length === 0) return {}
  const merged: Metadata = { ...stored }
  for (const [key, value] of Object.entries(patch)) {
    if (value === '') delete merged[key]
    else merged[key] = value
  }
  const keys = Object.keys(merged).length
  if (keys > 50) throw invalidField(field, `would have ${keys} keys after this write; at most 50`)
  return merged
}
