import { sql } from 'drizzle-orm'
import {
  char,
  doublePrecision,
  index,
  jsonb,
  pgEnum,
  pgTable,
  real,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import { organizations } from './accounts'
import { created, id, metadata } from './columns'
import { UOMS } from './units'

export { UOMS }

export const DATA_SOURCES = [
  'crowd_sourced',
  'claimed',
  'imported',
  'ai_extracted',
  'brand_site_crawl',
  'gtin1_authoritative',
  'external_api',
  'open_food_facts',
  'usda_fdc',
  'fda_ndc',
  'affiliate_feed',
  'datakick',
  'common_crawl_wdc',
] as const
/** UN/CEFACT unit codes of `net_content_uom` (spec: product record). */
export const CLAIM_STATUSES = ['unverified', 'prefix_matched', 'verified', 'disputed', 'rejected'] as const

export const dataSource = pgEnum('data_source', DATA_SOURCES)
export const claimStatus = pgEnum('claim_verification_status', CLAIM_STATUSES)

/** A brand; it belongs to an organization once claimed (spec: is_claimed follows the brand). */
export const brands = pgTable(
  'brands',
  {
    id: id(),
    name: varchar({ length: 255 }).notNull(),
    organizationId: uuid().references(() => organizations.id, { onDelete: 'set null' }),
    created: created(),
  },
  (table) => [
    uniqueIndex('brands_organization_name_key')
      .on(table.organizationId, sql`lower(${table.name})`)
      .where(sql`${table.organizationId} is not null`),
    uniqueIndex('brands_unowned_name_key').on(sql`lower(${table.name})`).where(sql`${table.organizationId} is null`),
  ],
)

export type SubstanceMatch = { slug: string; span: string; confidence: number }

export const products = pgTable(
  'products',
  {
    id: id(),
    gtin: char({ length: 14 }).notNull().unique(),
    productName: varchar({ length: 255 }).notNull().default(''),
    /** No foreign key (migration 0035): deleting a brand products name fails by trigger instead. */
    brandId: uuid(),
    manufacturer: varchar({ length: 255 }).notNull().default(''),
    description: text().notNull().default(''),
    imageUrl: varchar({ length: 2048 }).notNull().default(''),
    countryOfOrigin: varchar({ length: 2 }).notNull().default(''),
    netContent: varchar({ length: 100 }).notNull().default(''),
    netContentValue: doublePrecision(),
    netContentUom: varchar({ length: 3 }).$type<(typeof UOMS)[number] | ''>(),
    /** No foreign key (migration 0038): checked per statement, set null by trigger when its organization goes. */
    ownerId: uuid(),
    claimVerificationStatus: claimStatus(),
    length: doublePrecision(),
    width: doublePrecision(),
    height: doublePrecision(),
    depth: doublePrecision(),
    lengthUom: varchar({ length: 10 }).notNull().default(''),
    widthUom: varchar({ length: 10 }).notNull().default(''),
    heightUom: varchar({ length: 10 }).notNull().default(''),
    depthUom: varchar({ length: 10 }).notNull().default(''),
    grossWeight: doublePrecision(),
    netWeight: doublePrecision(),
    grossWeightUom: varchar({ length: 10 }).notNull().default(''),
    netWeightUom: varchar({ length: 10 }).notNull().default(''),
    gpcBrickCode: varchar({ length: 8 }).notNull().default(''),
    gpcClassCode: varchar({ length: 8 }).notNull().default(''),
    gpcFamilyCode: varchar({ length: 8 }).notNull().default(''),
    gpcSegmentCode: varchar({ length: 8 }).notNull().default(''),
    metadata: metadata(),
    dataSource: dataSource().notNull().default('claimed'),
    confidenceScore: real().notNull().default(0),
    fieldConfidence: jsonb().$type<Record<string, number>>().notNull().default({}),
    ingredientsText: text().notNull().default(''),
    usageInstructions: text().notNull().default(''),
    containsAllergens: text().array().notNull().default(sql`'{}'::text[]`),
    mayContainAllergens: text().array().notNull().default(sql`'{}'::text[]`),
    certifications: text().array().notNull().default(sql`'{}'::text[]`),
    substances: jsonb().$type<SubstanceMatch[]>().notNull().default([]),
    /** A recall in effect (migration 0026): all null when there is none; url null = the service's notice page. */
    recallReason: text(),
    recalledAt: timestamp({ withTimezone: true, mode: 'date' }),
    recallUrl: varchar({ length: 2048 }),
    /** No foreign key (migration 0038), as owner_id. */
    recalledBy: uuid(),
    created: created(),
    modified: timestamp({ withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    // the owner's list is its only reader: unowned products (a feed's millions) stay out (migration 0030)
    index('products_owner_gtin_idx').on(table.ownerId, table.gtin).where(sql`${table.ownerId} is not null`),
    index('products_brand_idx').on(table.brandId),
  ],
)

/**
 * Provenance: every value a field has been given, by source, with its confidence. The promotion
 * routine picks each canonical field from these. A row is one statement of a source (or
 * contributor): the fields it gave at once, by name. A feed chunk states thousands of products,
 * each with several fields: a row per field made its candidates the largest write of an import.
 */
export const productCandidates = pgTable(
  'product_candidates',
  {
    id: id(),
    /**
     * No foreign key (migration 0035): a check per row was a fifth of a feed chunk's database time.
     * Writers name products they read or made in the same transaction; a deleted product's
     * statements go with it (trigger `products_deleted_statements`).
     */
    productId: uuid().notNull(),
    /** field name → value, as the API stores it (JSON null: a cleared value) */
    fields: jsonb().$type<Record<string, unknown>>().notNull(),
    source: dataSource().notNull(),
    confidence: real().notNull(),
    /** Who supplied it (an organization for claimed and crowd values); independence is per contributor. */
    contributorId: uuid(),
    /** The feed it came from (its retailer; the nil UUID for another source's feed); NULL through the API. */
    scope: uuid(),
    created: created(),
  },
  (table) => [index('product_candidates_product_created_idx').on(table.productId, table.created)],
)
