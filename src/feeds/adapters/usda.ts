import { stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Readable } from 'node:stream'
import { MAX_RECORD_BYTES, sampleOf } from '../../shared/text-records'
import { csvRows, type InflateLimits, openInput } from './input'
import { parseQuantity, withoutPackageSize } from './quantity'
import { checkedFields, type FeedRecord, type FeedRow, RowError, readFeedCode, text, unshout } from './record'

/**
 * USDA FoodData Central, Branded Foods: the CSV download (branded_food.csv joined to food.csv by
 * fdc_id for the product's description) or the JSON download ({"BrandedFoods": [...]}, streamed
 * one food at a time). Field definitions: https://fdc.nal.usda.gov/docs/Download_Field_Descriptions_Oct2020.pdf
 * Nutrients are not part of the product record and are not read.
 */
type UsdaFood = {
  fdcId: string
  description?: string
  brandOwner?: string
  brandName?: string
  gtinUpc?: string
  ingredients?: string
  packageWeight?: string
  modified?: string
}

/** "The Coca-Cola Company-0049000000016" → "The Coca-Cola Company": a GLN appended to the owner. */
const owner = (value: string | undefined) => value?.replace(/-\d{13}$/, '').trim() || undefined

/** 2019-07-29 or 7/14/2017 → epoch seconds; the fdc_id breaks ties (a newer record has a larger id). */
function versionOf(modified: string | undefined, fdcId: string): number {
  const us = modified?.match(/^(\d{1,2})\/(\d{1,2})\/(\d{4})$/)
  const date = us ? Date.UTC(+us[3]!, +us[1]! - 1, +us[2]!) : modified ? Date.parse(modified) : NaN
  const days = Number.isFinite(date) ? Math.floor(date / 86_400_000) : 0
  return days * 1e8 + (Number(fdcId) % 1e8 || 0)
}

export function usdaRecord(food: UsdaFood): FeedRecord {
  const { gtin14, reading } = readFeedCode(food.gtinUpc)
  const packageWeight = text(food.packageWeight, 'package_weight')
  const net = parseQuantity(packageWeight)
  const name = text(food.description, 'description')
  const ingredients = text(food.ingredients, 'ingredients')?.replace(/^ingredients\s*:\s*/i, '')
  if (!name && !ingredients) throw new RowError('no product data: no description or ingredients')
  const brandOwner = owner(text(food.brandOwner, 'brand_owner'))
  const brandName = text(food.brandName, 'brand_name')
  const fields = checkedFields({
    product_name: withoutPackageSize(name && unshout(name), net),
    brand: (brandName && unshout(brandName)) ?? brandOwner,
    manufacturer: brandOwner,
    net_content: packageWeight,
    net_content_value: net?.value,
    net_content_uom: net?.uom,
    ingredients_text: ingredients,
  })
  return { gtin14, reading, version: versionOf(food.modified, food.fdcId), fields }
}

function toRow(line: number, food: () => UsdaFood, input: () => string): FeedRow {
  try {
    return { line, record: usdaRecord(food()) }
  } catch (err) {
    if (!(err instanceof RowError)) throw err
    return { line, rejected: err.message, input: sampleOf(input()) }
  }
}

/** The folder of the CSV download (or its branded_food.csv): food.csv is read first for descriptions. */
export async function* usdaCsv(path: string): AsyncGenerator<FeedRow> {
  const folder = (await stat(path)).isDirectory() ? path : dirname(path)
  const descriptions = new Map<string, string>()
  for await (const { row } of csvRows(await openInput(join(folder, 'food.csv')), { delimiter: ',' }))
    if (row?.fdc_id && row.description) descriptions.set(row.fdc_id, row.description)
  const branded = await openInput(join(folder, 'branded_food.csv'))
  for await (const read of csvRows(branded, { delimiter: ',' })) {
    if (read.problem !== undefined) {
      yield { line: read.line, rejected: read.problem, input: read.input }
      continue
    }
    const { line, row } = read
    yield toRow(
      line,
      () => ({
        fdcId: row.fdc_id ?? '',
        description: descriptions.get(row.fdc_id ?? ''),
        brandOwner: row.brand_owner,
        brandName: row.brand_name,
        gtinUpc: row.gtin_upc,
        ingredients: row.ingredients,
        packageWeight: row.package_weight,
        modified: row.modified_date || row.available_date,
      }),
      () => JSON.stringify(row),
    )
  }
}

/**
 * The elements of the first top-level array in a JSON stream, as text, without holding the whole
 * document: a small scanner that tracks nesting and strings. An element longer than `max`
 * characters is not held either: it comes as a `problem` with its start.
 */
export async function* jsonArrayElements(
  stream: Readable,
  max = MAX_RECORD_BYTES,
): AsyncGenerator<{ text: string; problem?: string }> {
  const decoder = new TextDecoder()
  let depth = 0
  let inString = false
  let escaped = false
  let item: string[] = []
  let size = 0
  let sample: string | null = null
  let start = -1
  const keep = (part: string) => {
    size += part.length
    if (sample !== null) return
    if (size > max) {
      sample = sampleOf([...item, part].join(''))
      item = []
    } else item.push(part)
  }
  for await (const chunk of stream) {
    const s = decoder.decode(chunk as Uint8Array, { stream: true })
    start = depth >= 3 ? 0 : -1
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!
      if (inString) {
        if (escaped) escaped = false
        else if (c === '\\') escaped = true
        else if (c === '"') inString = false
        continue
      }
      if (c === '"') inString = true
      else if (c === '{' || c === '[') {
        depth++
        if (depth === 3 && start === -1) start = i
      } else if (c === '}' || c === ']') {
        depth--
        if (depth === 2 && start !== -1) {
          keep(s.slice(start, i + 1))
          yield sample === null
            ? { text: item.join('') }
            : { text: sample, problem: `the element is ${size} characters long; at most ${max} are read as one` }
          item = []
          size = 0
          sample = null
          start = -1
        }
      }
    }
    if (start !== -1) keep(s.slice(start))
  }
  if (depth !== 0) throw new Error('the JSON document ends inside a value (truncated file?)')
}

/** The elements of the first top-level array of a JSON stream, as text (see jsonArrayElements). */
export async function* jsonArrayItems(stream: Readable): AsyncGenerator<string> {
  for await (const element of jsonArrayElements(stream, Number.POSITIVE_INFINITY)) yield element.text
}

/** The JSON download: {"BrandedFoods": [ {...food...}, ... ]}. */
export async function* usdaJson(path: string, limits?: InflateLimits): AsyncGenerator<FeedRow> {
  let n = 0
  for await (const { text: raw, problem } of jsonArrayElements(await openInput(path, undefined, limits))) {
    n++
    if (problem) {
      yield { line: n, rejected: problem, input: raw }
      continue
    }
    let food: Record<string, unknown>
    try {
      food = JSON.parse(raw)
    } catch (err) {
      yield { line: n, rejected: `malformed JSON: ${(err as Error).message}`, input: sampleOf(raw) }
      continue
    }
    const str = (v: unknown) => (v === undefined || v === null ? undefined : (v as string))
    yield toRow(
      n,
      () => ({
        fdcId: String(food.fdcId ?? ''),
        description: str(food.description),
        brandOwner: str(food.brandOwner),
        brandName: str(food.brandName),
        gtinUpc: str(food.gtinUpc),
        ingredients: str(food.ingredients),
        packageWeight: str(food.packageWeight),
        modified: str(food.modifiedDate) ?? str(food.availableDate),
      }),
      () => raw,
    )
  }
}
