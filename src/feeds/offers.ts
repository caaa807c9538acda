import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { normalizeGtin } from '../catalog/gtin'
import { productIdOf } from '../catalog/resource'
import { db } from '../db/client'
import { fromExcluded } from '../db/params'
import { offers } from '../db/schema'
import type { Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { visibleRetailerIds } from '../retailers/retailers'
import { decimalString } from '../shared/decimal'
import { notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { type PageQuery, paginate } from '../shared/pagination'
import type { FeedOffer } from './adapters/record'

type OfferRow = typeof offers.$inferSelect

export const toOfferResource = (row: OfferRow, gtin: string) => ({
  id: toShortId(row.id),
  gtin,
  retailer_id: toShortId(row.retailerId),
  item_id: row.itemId,
  title: row.title,
  price: decimalString(row.price),
  regular_price: decimalString(row.regularPrice),
  currency: row.currency,
  url: row.url,
  availability: row.availability,
  multipack: row.multipack,
  observed_at: row.observedAt.toISOString(),
  created: row.created.toISOString(),
  modified: row.modified.toISOString(),
})
export type OfferResource = ReturnType<typeof toOfferResource>

/** What a shopper would notice: the price asked, the regular price, the currency, the availability. */
const shownAs = (o: { price: string; regularPrice: string; currency: string; availability: string }) =>
  [decimalString(o.price), decimalString(o.regularPrice), o.currency, o.availability].join('|')

export type OfferWrite = { productId: string; gtin14: string; offer: FeedOffer }

/**
 * Writes a retailer's offers in one statement (by the merchant's item id) and emits
 * `offer.updated` to the retailer's organization for each offer that is new or whose price,
 * currency or availability changed.
 */
export async function upsertOffers(
  tx: Tx,
  retailer: { id: string; organizationId: string },
  items: OfferWrite[],
  observedAt: Date,
) {
  if (items.length === 0) return 0
  const unique = [...new Map(items.map((i) => [i.offer.itemId, i])).values()]
  const before = new Map(
    (
      await tx
        .select()
        .from(offers)
        .where(
          and(
            eq(offers.retailerId, retailer.id),
            inArray(
              offers.itemId,
              unique.map((i) => i.offer.itemId),
            ),
          ),
        )
    ).map((o) => [o.itemId, shownAs(o)]),
  )
  const written = await tx
    .insert(offers)
    .values(
      unique.map(({ productId, offer }) => ({
        retailerId: retailer.id,
        productId,
        itemId: offer.itemId,
        title: offer.title,
        price: offer.price,
        regularPrice: offer.regularPrice,
        currency: offer.currency,
        url: offer.url,
        availability: offer.availability,
        multipack: offer.multipack,
        observedAt,
      })),
    )
    .onConflictDoUpdate({
      target: [offers.retailerId, offers.itemId],
      set: {
        ...fromExcluded(offers, [
          'productId',
          'title',
          'price',
          'regularPrice',
          'currency',
          'url',
          'availability',
          'multipack',
          'observedAt',
        ]),
        modified: sql`now()`,
      },
    })
    .returning()
  const gtinOf = new Map(unique.map((i) => [i.offer.itemId, i.gtin14]))
  const changed = written.filter((o) => before.get(o.itemId) !== shownAs(o))
  await emit(
    tx,
    ...changed.map((o) => ({
      eventType: 'offer.updated' as const,
      organizationId: retailer.organizationId,
      subjectId: o.id,
      data: toOfferResource(o, gtinOf.get(o.itemId)!),
    })),
  )
  return changed.length
}

/**
 * GET …/products/{gtin}/offers: the product's offers that the caller's organization may see, by
 * retailer then item: those of canonical retailers and of its own (a private retailer's offers,
 * like the retailer, do not exist for other organizations). 404 for an unknown GTIN.
 */
export async function listOffers(
  callerOrg: string,
  gtinInput: string,
  filter: { retailer_id?: string },
  page: PageQuery,
) {
  const gtin = normalizeGtin(gtinInput)
  const productId = await productIdOf(db, gtin)
  if (!productId) throw notFound('product')
  const where = and(
    eq(offers.productId, productId),
    inArray(offers.retailerId, visibleRetailerIds(callerOrg)),
    filter.retailer_id ? eq(offers.retailerId, filter.retailer_id) : undefined,
  )
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({ offer: offers, total_count: sql<number>`count(*) over ()` })
        .from(offers)
        .where(where)
        .orderBy(asc(offers.retailerId), asc(offers.itemId))
        .limit(limit)
        .offset(offset),
    async () => (await db.$count(offers, where)) as number,
    (r) => toOfferResource(r.offer, gtin),
  )
}
