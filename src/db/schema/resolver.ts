import { sql } from 'drizzle-orm'
import { boolean, index, integer, pgTable, smallint, text, uuid, varchar } from 'drizzle-orm/pg-core'
import { organizations } from './accounts'
import { products } from './catalog'
import { at, created, id, metadata } from './columns'

export const SCOPE_TYPES = ['ORGANIZATION', 'BRAND', 'PRODUCT', 'BATCH', 'SERIAL'] as const
export type ScopeType = (typeof SCOPE_TYPES)[number]

const strings = () => text().array().notNull().default(sql`'{}'::text[]`)

/**
 * Where a product link resolves (spec "Resolution rule", contract §6). `scope_id` names what the
 * rule is attached to: the organization, a brand, a product (its id), or the lot or serial value
 * of a BATCH or SERIAL rule, whose product is `product_id`.
 */
export const resolutionRules = pgTable(
  'resolution_rules',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    scopeType: varchar({ length: 12 }).$type<ScopeType>().notNull(),
    scopeId: varchar({ length: 64 }).notNull(),
    productId: uuid().references(() => products.id, { onDelete: 'cascade' }),
    orderIndex: integer().notNull().default(0),
    enabled: boolean().notNull().default(true),
    absoluteStartAt: at(),
    absoluteEndAt: at(),
    annualStartMmdd: varchar({ length: 5 }),
    annualEndMmdd: varchar({ length: 5 }),
    daysOfWeek: smallint().array().notNull().default(sql`'{}'::smallint[]`),
    timeOfDayStart: varchar({ length: 5 }),
    timeOfDayEnd: varchar({ length: 5 }),
    timezone: varchar({ length: 64 }).notNull().default('UTC'),
    linkType: varchar({ length: 100 }).notNull().default('gs1:defaultLink'),
    locationCountries: strings(),
    locationRegions: strings(),
    locationCities: strings(),
    customUrl: varchar({ length: 2048 }).notNull(),
    sectionAnchor: varchar({ length: 255 }).notNull().default(''),
    title: varchar({ length: 255 }).notNull().default(''),
    mediaType: varchar({ length: 100 }).notNull().default('text/html'),
    hreflang: strings(),
    metadata: metadata(),
    created: created(),
    modified: at().notNull().defaultNow(),
  },
  (table) => [
    index('resolution_rules_organization_idx').on(table.organizationId, table.scopeType, table.created, table.id),
    index('resolution_rules_product_idx').on(table.productId),
  ],
)
