import { sql } from 'drizzle-orm'
import { index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core'
import { created, id, metadata } from './columns'

export const apiKeyRole = pgEnum('api_key_role', ['manager', 'editor', 'readonly'])
export const memberRole = pgEnum('member_role', ['owner', 'manager', 'editor', 'billing', 'viewer'])

export const organizations = pgTable('organizations', {
  id: id(),
  name: varchar({ length: 255 }).notNull(),
  gs1CompanyPrefixes: text().array().notNull().default(sql`'{}'::text[]`),
  metadata: metadata(),
  created: created(),
})

/**
 * Who holds each GS1 company prefix (migration 0022): one organization per prefix, and no prefix of
 * one organization is a prefix of another's. `organizations.gs1_company_prefixes` keeps what an
 * organization was registered with; this is what ownership checks read.
 */
export const companyPrefixes = pgTable(
  'gs1_company_prefixes',
  {
    prefix: varchar({ length: 12 }).primaryKey(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    created: created(),
  },
  (table) => [index('gs1_company_prefixes_organization_idx').on(table.organizationId)],
)

export const members = pgTable(
  'members',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userEmail: varchar({ length: 320 }).notNull(),
    userName: varchar({ length: 255 }).notNull().default(''),
    userMetadata: jsonb().$type<Record<string, string>>().notNull().default({}),
    role: memberRole().notNull(),
    created: created(),
  },
  (table) => [
    uniqueIndex('members_organization_email_key').on(table.organizationId, sql`lower(${table.userEmail})`),
    index('members_organization_created_idx').on(table.organizationId, table.created, table.id),
  ],
)

export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: varchar({ length: 255 }).notNull(),
    description: varchar({ length: 255 }).notNull().default(''),
    role: apiKeyRole().notNull().default('readonly'),
    metadata: metadata(),
    /** First 8 characters of the raw key, for the masked form. */
    keyPrefix: varchar({ length: 8 }).notNull(),
    /** SHA-256 of the raw key, hex. The raw key is never stored. */
    keyHash: varchar({ length: 64 }).notNull().unique(),
    created: created(),
    revokedAt: timestamp({ withTimezone: true, mode: 'date' }),
  },
  (table) => [index('api_keys_organization_created_idx').on(table.organizationId, table.created, table.id)],
)
