import type { Readable } from 'node:stream'
import { sampleOf } from '../../shared/text-records'
import { csvRows } from './input'
import { checkedFields, type FeedOffer, type FeedRow, RowError, readFeedCode, text } from './record'

/**
 * Affiliate and merchant product feeds in CSV or TSV with Google Merchant Center attribute names
 * (https://support.google.com/merchants/answer/7052112); the delimiter is sniffed, a BOM removed,
 * quoted newlines kept. A run may map other column names onto these attributes.
 */
export const MERCHANT_ATTRIBUTES = [
  'id',
  'title',
  'description',
  'link',
  'image_link',
  'availability',
  'price',
  'sale_price',
  'sale_price_effective_date',
  'brand',
  'gtin',
  'multipack',
] as const
export type MerchantAttribute = (typeof MERCHANT_ATTRIBUTES)[number]
export type ColumnMapping = Partial<Record<MerchantAttribute, string>>

const AVAILABILITY: Record<string, FeedOffer['availability']> = {
  in_stock: 'in_stock',
  'in stock': 'in_stock',
  out_of_stock: 'out_of_stock',
  'out of stock': 'out_of_stock',
  preorder: 'preorder',
  backorder: 'backorder',
}

/** "3.49 USD", "1,89 EUR", "USD 3.49" → a decimal string and an ISO 4217 code. */
export function parsePrice(value: string): { amount: string; currency: string } {
  const m = value.trim().match(/^(?:([A-Z]{3})\s+)?(\d{1,12}(?:[.,]\d{1,4})?)(?:\s+([A-Z]{3}))?$/)
  const currency = m?.[1] ?? m?.[3]
  if (!m || !currency || (m[1] && m[3]))
    throw new RowError(`price ${JSON.stringify(value)} is not "<amount> <currency>"`)
  const amount = m[2]!.replace(',', '.').replace(/^0+(?=\d)/, '')
  return { amount, currency }
}

/** Whether a sale price applies at `at`: no window, or `start/end` in ISO 8601 around it. */
function saleApplies(window: string | undefined, at: Date): boolean {
  if (!window) return true
  const [start, end] = window.split('/').map((s) => Date.parse(s.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')))
  if (!Number.isFinite(start) || !Number.isFinite(end)) return false
  return start! <= at.getTime() && at.getTime() <= end!
}

export async function* affiliateFeed(
  stream: Readable,
  options: { mapping?: ColumnMapping; observedAt: Date },
): AsyncGenerator<FeedRow> {
  const column = (a: MerchantAttribute) => options.mapping?.[a] ?? a
  for await (const read of csvRows(stream)) {
    if (read.problem !== undefined) {
      yield { line: read.line, rejected: read.problem, input: read.input }
      continue
    }
    const { line, row } = read
    const get = (a: MerchantAttribute) => text(row[column(a)], a)
    try {
      const itemId = get('id')
      if (!itemId) throw new RowError(`no ${column('id')}`)
      const gtin = get('gtin')
      if (!gtin) throw new RowError(`no gtin (identifier_exists: ${row.identifier_exists || 'not given'})`)
      const { gtin14, reading } = readFeedCode(gtin)
      const price = parsePrice(get('price') ?? '')
      const sale = get('sale_price')
      const salePrice =
        sale && saleApplies(get('sale_price_effective_date'), options.observedAt) ? parsePrice(sale) : null
      const availability = AVAILABILITY[(get('availability') ?? '').toLowerCase()]
      if (!availability)
        throw new RowError(
          `availability ${JSON.stringify(get('availability') ?? '')} is not one of in_stock, out_of_stock, preorder, backorder`,
        )
      const url = get('link')
      if (!url || !/^https?:\/\/\S+$/.test(url)) throw new RowError('link must be an absolute http(s) URL')
      const multipack = Number(get('multipack') ?? '') || null
      const offer: FeedOffer = {
        itemId,
        title: get('title') ?? '',
        price: salePrice?.amount ?? price.amount,
        regularPrice: price.amount,
        currency: price.currency,
        url,
        availability,
        multipack: multipack && multipack > 1 ? multipack : null,
      }
      // a merchant's multipack shares the unit's GTIN but describes the pack: it says nothing of the unit
      const fields = offer.multipack
        ? {}
        : checkedFields({
            product_name: get('title'),
            brand: get('brand'),
            description: get('description'),
            image_url: get('image_link'),
          })
      yield { line, record: { gtin14, reading, version: 0, fields, offer } }
    } catch (err) {
      if (!(err instanceof RowError)) throw err
      yield { line, rejected: err.message, input: sampleOf(JSON.stringify(row)) }
    }
  }
}
