import { t } from 'elysia'
import { createTranslator } from 'short-uuid'
import { invalidField } from './errors'

/** Python `shortuuid` 1.x default alphabet (spec Conventions); short-uuid's own default differs. */
export const SHORTUUID_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const SHORT = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

const translator = createTranslator(SHORTUUID_ALPHABET)

const BASE = 57 // SHORTUUID_ALPHABET.length
const CODES = Array.from(SHORTUUID_ALPHABET, (ch) => ch.charCodeAt(0))
const HEX = new Int8Array(128)
for (const [i, ch] of [...'0123456789abcdef'].entries()) HEX[ch.charCodeAt(0)] = HEX[ch.toUpperCase().charCodeAt(0)] = i
/** Where each 16-bit word of a canonical UUID's text starts. */
const WORD_AT = [0, 4, 9, 14, 19, 24, 28, 32]
const words = new Int32Array(8)
const digits = new Array<number>(22)
const recent = new Map<string, string>()

/**
 * The shortuuid of a UUID. This runs for every id of every response (a list page repeats its
 * organization id on each row) and every webhook body, so it is done by long division of the
 * UUID's eight 16-bit words by 57 in 32-bit integers (each step's dividend is below 57 * 2^16):
 * 0.6-0.7 µs an id against 1.3-1.4 for BigInt, which was three times faster than short-uuid's
 * digit-string arithmetic (200,000 time-ordered ids, scratch runs). Remembered for recent ids; a
 * test checks that it agrees with short-uuid on 100,000 random values. Decoding (input
 * validation) stays with short-uuid.
 */
export function toShortId(uuid: string): string {
  const known = recent.get(uuid)
  if (known) return known
  if (!UUID.test(uuid)) throw new Error(`not a UUID: ${uuid}`)
  for (let w = 0; w < 8; w++) {
    let value = 0
    for (let at = WORD_AT[w]!, end = at + 4; at < end; at++) value = (value << 4) | HEX[uuid.charCodeAt(at)]!
    words[w] = value
  }
  for (let i = 21; i >= 0; i--) {
    let rest = 0
    for (let w = 0; w < 8; w++) {
      const dividend = (rest << 16) | words[w]!
      const quotient = (dividend / BASE) | 0
      rest = dividend - quotient * BASE
      words[w] = quotient
    }
    digits[i] = CODES[rest]!
  }
  const out = String.fromCharCode(...digits)
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
