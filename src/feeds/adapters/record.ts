import { Value } from '@sinclair/typebox/value'
import { normalizeField, PRODUCT_FIELDS, type ProductField, TAG_FIELDS, type TagField } from '../../catalog/fields'
import { expandUpcE, rangeProblem, readGtin } from '../../catalog/gtin'

/** What a source says of a product: values of the product field list, its brand, and label tags. */
export type FeedFields = Partial<Record<ProductField, unknown>> & { brand?: string } & Partial<
    Record<TagField, string[]>
  >

/** A merchant's offer of a product, as an affiliate feed row gives it. */
export type FeedOffer = {
  itemId: string
  title: string
  /** decimal string, the shown (sale, when one applies) price */
  price: string
  regularPrice: string
  currency: string
  url: string
  availability: 'in_stock' | 'out_of_stock' | 'preorder' | 'backorder'
  multipack: number | null
}

/** How a code was read: the GTIN kind, or the repair taken on it. */
export type CodeReading = 'gtin8' | 'upce' | 'gtin12' | 'gtin13' | 'gtin14' | 'upca_leading_zero_restored'

export type FeedRecord = {
  gtin14: string
  reading: CodeReading
  /** orders two records of one product within a file (newest wins), e.g. a modification time */
  version: number
  fields: FeedFields
  offer?: FeedOffer
}

/** One input row: a record, or why it was rejected; `line` counts from 1 (data rows, header excluded). */
export type FeedRow = { line: number } & ({ record: FeedRecord } | { rejected: string; input: string })

/** A row that cannot become a record; the adapter reports it with its line instead of failing the run. */
export class RowError extends Error {}

/**
 * A product code as feeds write it, read to a trade-item GTIN-14. Open Food Facts drops the leading
 * zero of UPC-A codes (11 digits) and mixes EAN-8 with zero-suppressed UPC-E: an 8-digit code is
 * read as UPC-E only when that reading's check digit holds, else as EAN-8. Restricted circulation
 * (in-store, RCN-8) and coupon numbers are refused: they name no trade item.
 */
export function readFeedCode(input: unknown): { gtin14: string; reading: CodeReading } {
  if (typeof input !== 'string' && typeof input !== 'number') throw new RowError('no product code')
  const digits = String(input)
    .trim()
    .replace(/[\s.-]/g, '')
  if (digits === '') throw new RowError('no product code')
  let reading: CodeReading | null = null
  let code = digits
  if (/^\d{11}$/.test(digits)) {
    code = `0${digits}`
    reading = 'upca_leading_zero_restored'
  } else if (/^\d{8}$/.test(digits)) {
    const upca = expandUpcE(digits)
    if (upca && readGtin(upca).ok) reading = 'upce'
  }
  const read = readGtin(code, { allowUpcE: reading === 'upce' })
  if (!read.ok) throw new RowError(`invalid GTIN ${JSON.stringify(digits)}: ${read.reason}`)
  const problem = rangeProblem(read.gtin14)
  if (problem) throw new RowError(`${digits} is a ${problem}; not stored as a product`)
  return { gtin14: read.gtin14, reading: reading ?? read.kind }
}

const SHOUTING = /^[^a-z]*[A-Z][^a-z]*$/

/** "SIMPLY LEMONADE" → "Simply Lemonade": an all-capitals name reads as the others do. */
export function unshout(text: string): string {
  if (!SHOUTING.test(text) || text.length < 4) return text
  return text.toLowerCase().replace(/(^|[\s(/&-])(\p{L})/gu, (_, sep, letter) => sep + letter.toUpperCase())
}

/** PostgreSQL stores no NUL in text or jsonb, and a lone surrogate is not text: either rejects the row. */
function unstorable(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0') || !value.isWellFormed()
  return Array.isArray(value) && value.some(unstorable)
}
const UNSTORABLE = 'must not contain a NUL character or a lone surrogate'

/** A text value: trimmed, blanks collapsed; undefined when absent or blank; a wrong type is a RowError. */
export function text(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new RowError(`${name} must be a string, got ${typeof value}`)
  if (unstorable(value)) throw new RowError(`${name} ${UNSTORABLE}`)
  const trimmed = value.replace(/\s+/g, ' ').trim()
  return trimmed === '' ? undefined : trimmed
}

/**
 * The fields that are set, each checked against the product field list's input schema; a value the
 * API would refuse rejects the row (so a product is never half-written).
 */
export function checkedFields(fields: FeedFields): FeedFields {
  const out: FeedFields = {}
  for (let [name, value] of Object.entries(fields)) {
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) continue
    if (unstorable(value)) throw new RowError(`${name} ${UNSTORABLE}`)
    if (name === 'brand') {
      if (typeof value !== 'string' || value.length > 255)
        throw new RowError('brand must be text of at most 255 characters')
    } else if (!(TAG_FIELDS as readonly string[]).includes(name)) {
      const def = PRODUCT_FIELDS[name as ProductField]
      if (!Value.Check(def.input, value)) {
        const error = [...Value.Errors(def.input, value)][0]
        throw new RowError(`${name}: ${error?.message ?? 'invalid value'}`)
      }
      // stored as the API stores it ("be" -> "BE"), so the record's content hash is of that value
      value = normalizeField(name as ProductField, value)
    }
    ;(out as Record<string, unknown>)[name] = value
  }
  return out
}
