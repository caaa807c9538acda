import { sql } from 'drizzle-orm'
import { boolean, index, pgTable, text, uuid, varchar } from 'drizzle-orm/pg-core'
import { organizations } from './accounts'
import { created, id, metadata } from './columns'

export const retailers = pgTable(
  'retailers',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar({ length: 255 }).notNull(),
    metadata: metadata(),
    isOnline: boolean().notNull().default(false),
    isPhysical: boolean().notNull().default(false),
    website: varchar({ length: 2048 }).notNull().default(''),
    gln: varchar({ length: 13 }).notNull().default(''),
    isCanonical: boolean().notNull().default(false),
    marketplaceRegions: text().array().notNull().default(sql`'{}'::text[]`),
    category: varchar({ length: 255 }).notNull().default(''),
    isActive: boolean().notNull().default(true),
    created: created(),
  },
  (table) => [
    index('retailers_organization_name_idx').on(table.organizationId, sql`lower(${table.name})`, table.id),
    index('retailers_canonical_name_idx').on(sql`lower(${table.name})`, table.id).where(sql`${table.isCanonical}`),
  ],
)
