import { t } from 'elysia'
import { createTranslator } from 'short-uuid'
import { invalidField } from './errors'

/** Python `shortuuid` 1.x default alphabet (spec Conventions); short-uuid's own default differs. */
export const SHORTUUID_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const SHORT = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

const translator = createTranslator(SHORTUUID_ALPHABET)

const BASE = BigInt(SHORTUUID_ALPHABET.length)
const recent = new Map<string, string>()

/**
 * The shortuuid of a UUID. This runs for every id of every response (a list page repeats its
 * organization id on each row), so it is done with BigInt, three times faster than short-uuid's
 * digit-string arithmetic, and remembered for recent ids; a test checks that both encoders agree.
 * Decoding (input validation) stays with short-uuid.
 */
export function toShortId(uuid: string): string {
  const known = recent.get(uuid)
  if (known) return known
  let n = BigInt(`0x${uuid.replaceAll('-', '')}`)
  let out = ''
  for (let i = 0; i < 22; i++) {
    out = SHORTUUID_ALPHABET[Number(n % BASE)] + out
    n /= BASE
  }
  if (recent.size >= 10_000) recent.clear()
  recent.set(uuid, out)
  return out
}

/** The UUID an id names, given either form; null when it is neither (or overflows 128 bits). */
export function parseId(id: string): string | null {
  if (UUID.test(id)) return id.toLowerCase()
  if (!SHORT.test(id)) return null
  const uuid = translator.toUUID(id)
  return UUID.test(uuid) && translator.fromUUID(uuid) === id ? uuid : null
}

/** A 22-character shortuuid as the API returns it. */
export const ShortId = t.String({
  pattern: SHORT.source,
  description: 'shortuuid (22 characters) encoding the row UUID',
  examples: ['MLpZDiEXM4VsUryR9oE8uc'],
})

const ID_ERROR = 'must be a 22-character shortuuid or a canonical UUID'

/** An id on input, as written: the shortuuid form or the canonical UUID form (anchored as a whole). */
export const IdInput = t.String({
  pattern: `^(?:${SHORT.source.slice(1, -1)}|${UUID.source.slice(1, -1)})$`,
  description: 'shortuuid (22 characters) or canonical UUID (8-4-4-4-12 hex)',
  error: ID_ERROR,
})

/**
 * An id parameter (path, query or body) decoded to the row's UUID by the schema itself, so a
 * handler receives a UUID or the request is 422: the pattern refuses malformed ids, and decoding
 * refuses the 22-character strings above 2^128 that match the pattern but name no UUID.
 */
export const Id = (field: string) =>
  t
    .Transform(IdInput)
    .Decode((value) => {
      const uuid = parseId(value)
      if (!uuid) throw invalidField(field, ID_ERROR)
      return uuid
    })
    .Encode((uuid) => uuid)
