import type { Readable } from 'node:stream'
import countries from 'i18n-iso-countries'
import { allergensOfTags, certificationsOfLabels } from '../../catalog/ingredients/analyze'
import { ASSIGNED_COUNTRIES } from '../../shared/countries'
import { sampleOf } from '../../shared/text-records'
import { csvRows, lines } from './input'
import { parseQuantity, quantityOf, withoutPackageSize } from './quantity'
import { checkedFields, type FeedRecord, type FeedRow, RowError, readFeedCode, text } from './record'

/**
 * Open Food Facts: the JSONL dump (one product object a line) and the tab-separated CSV export
 * (same keys, lists written comma-separated). Field names: https://world.openfoodfacts.org/data/data-fields.txt
 */
type OffProduct = Record<string, unknown>

/** A language-specific value: the main key, then the product's language, then English, then any. */
function localized(p: OffProduct, key: string): string | undefined {
  const lc = typeof p.lc === 'string' ? p.lc : 'en'
  const direct = text(p[key], key) ?? text(p[`${key}_${lc}`], `${key}_${lc}`) ?? text(p[`${key}_en`], `${key}_en`)
  if (direct) return direct
  const other = Object.keys(p).find((k) => k.startsWith(`${key}_`) && /^[a-z]{2}$/.test(k.slice(key.length + 1)))
  return other ? text(p[other], other) : undefined
}

/** A list value: an array of strings, or the CSV export's comma-separated text. */
function list(value: unknown, name: string): string[] {
  if (value === undefined || value === null || value === '') return []
  if (typeof value === 'string')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value
  throw new RowError(`${name} must be a list of strings`)
}

/** The one country an origins text names ("Colombia", "France"), else nothing ("France, Bénélux"). */
function originCountry(origins: string | undefined, lc: string): string | undefined {
  if (!origins) return undefined
  const parts = origins
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (parts.length !== 1) return undefined
  // a code as given ("be", "BE") is taken as the code, stored upper-case as the API stores it
  const given = parts[0]!.toUpperCase()
  if (/^[A-Z]{2}$/.test(given) && ASSIGNED_COUNTRIES.has(given)) return given
  const code = countries.getAlpha2Code(parts[0]!, lc) ?? countries.getAlpha2Code(parts[0]!, 'en')
  return code && ASSIGNED_COUNTRIES.has(code) ? code : undefined
}

function version(p: OffProduct): number {
  const t = Number(p.last_modified_t)
  return Number.isFinite(t) ? t : 0
}

/** One Open Food Facts product as a feed record. */
export function offRecord(p: OffProduct): FeedRecord {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new RowError('a line must be a JSON object')
  const { gtin14, reading } = readFeedCode(p.code)
  const lc = typeof p.lc === 'string' && /^[a-z]{2}$/.test(p.lc) ? p.lc : 'en'
  const quantity = text(p.quantity, 'quantity')
  const net = quantityOf(p.product_quantity, p.product_quantity_unit) ?? parseQuantity(quantity)
  const brands = list(p.brands, 'brands')
  const owner = text(p.brand_owner, 'brand_owner')
  const name = localized(p, 'product_name')
  const ingredients = localized(p, 'ingredients_text')
  if (!name && !ingredients && brands.length === 0 && !owner)
    throw new RowError('no product data: no name, brand or ingredients')
  const fields = checkedFields({
    product_name: withoutPackageSize(name, net),
    brand: brands[0] ?? owner,
    manufacturer: owner,
    description: localized(p, 'generic_name'),
    image_url: text(p.image_url, 'image_url') ?? text(p.image_front_url, 'image_front_url'),
    country_of_origin: originCountry(text(p.origins, 'origins'), lc),
    net_content: quantity,
    net_content_value: net?.value,
    net_content_uom: net?.uom,
    ingredients_text: ingredients,
    // OFF's own tags, beside what the ingredient text says (a record may have tags and no text)
    certifications: certificationsOfLabels(list(p.labels_tags, 'labels_tags')),
    // the CSV export names its allergen tags `allergens` ("en:milk,en:soybeans"), the JSONL `allergens_tags`
    contains_allergens: allergensOfTags(list(p.allergens_tags ?? p.allergens, 'allergens_tags')),
    may_contain_allergens: allergensOfTags(list(p.traces_tags, 'traces_tags')),
  })
  return { gtin14, reading, version: version(p), fields }
}

const rejected = (line: number, err: unknown, input: string): FeedRow => {
  if (!(err instanceof RowError) && !(err instanceof SyntaxError)) throw err
  const reason = err instanceof SyntaxError ? `malformed JSON: ${err.message}` : err.message
  return { line, rejected: reason, input: sampleOf(input) }
}

/** The JSONL dump: each line a product; a broken line is rejected with its number. */
export async function* offJsonl(stream: Readable): AsyncGenerator<FeedRow> {
  for await (const { line, text: raw, problem } of lines(stream, { skipBlank: true })) {
    if (problem) {
      yield { line, rejected: problem, input: raw.slice(0, 200) }
      continue
    }
    if (raw.trim() === '') continue
    try {
      yield { line, record: offRecord(JSON.parse(raw)) }
    } catch (err) {
      yield rejected(line, err, raw)
    }
  }
}

/** The CSV export: tab-separated, never quoted. */
export async function* offCsv(stream: Readable): AsyncGenerator<FeedRow> {
  for await (const read of csvRows(stream, { delimiter: '\t', quoted: false })) {
    if (read.problem !== undefined) {
      yield { line: read.line, rejected: read.problem, input: read.input }
      continue
    }
    const { line, row } = read
    try {
      yield { line, record: offRecord(row) }
    } catch (err) {
      yield rejected(line, err, JSON.stringify(row))
    }
  }
}
