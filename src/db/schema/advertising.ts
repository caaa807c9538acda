import {
  bigint,
  date,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  unique,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import { organizations } from './accounts'
import { at, bytea, created, id, metadata } from './columns'
import { retailers } from './retailers'

/** Money in USD, kept to the micro-dollar as ad platforms report it (numeric: exact, never a float). */
const money = () => numeric({ precision: 20, scale: 6 })
const count = () => bigint({ mode: 'number' }).notNull().default(0)

export const CAMPAIGN_STATUSES = ['draft', 'active', 'paused', 'completed', 'archived'] as const
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number]
export const PRICING_MODELS = ['CPC', 'CPM'] as const
export const SHARE_STATUSES = ['CALCULATED', 'APPROVED', 'PAID', 'DISPUTED'] as const
export type ShareStatus = (typeof SHARE_STATUSES)[number]
export const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const

/** An advertiser's campaign, run on one retailer's placements. */
export const campaigns = pgTable(
  'campaigns',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    retailerId: uuid()
      .notNull()
      .references(() => retailers.id, { onDelete: 'restrict' }),
    name: varchar({ length: 255 }).notNull(),
    status: varchar({ length: 16 }).$type<CampaignStatus>().notNull().default('draft'),
    budget: money().notNull(),
    pricingModel: varchar({ length: 3 }).$type<(typeof PRICING_MODELS)[number]>().notNull(),
    /** USD per click (CPC) or per thousand impressions (CPM) */
    rate: money().notNull(),
    startDate: date({ mode: 'string' }),
    endDate: date({ mode: 'string' }),
    metadata: metadata(),
    created: created(),
    modified: at().notNull().defaultNow(),
  },
  (table) => [
    index('campaigns_organization_idx').on(table.organizationId, table.created, table.id),
    index('campaigns_retailer_idx').on(table.retailerId),
  ],
)

/** One day of a campaign as one source reported it (idempotent by campaign, UTC date and source). */
export const campaignPerformance = pgTable(
  'campaign_performance',
  {
    campaignId: uuid()
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    date: date({ mode: 'string' }).notNull(),
    source: varchar({ length: 64 }).notNull(),
    impressions: count(),
    clicks: count(),
    spend: money().notNull(),
    modified: at().notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.campaignId, table.date, table.source] })],
)

/** A campaign's lifetime sums, kept in step with its rows in the same transaction (reports read this). */
export const campaignTotals = pgTable('campaign_totals', {
  campaignId: uuid()
    .primaryKey()
    .references(() => campaigns.id, { onDelete: 'cascade' }),
  impressions: count(),
  clicks: count(),
  spend: money().notNull().default('0'),
})

export type RejectedPerformanceRow = { row: number; input: string; reason: string }

/** A bulk upload of performance rows (CSV or JSON lines), written by a pg-boss job in chunks. */
export const performanceImports = pgTable(
  'performance_imports',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    format: varchar({ length: 8 }).$type<'csv' | 'jsonl'>().notNull(),
    fileName: varchar({ length: 255 }).notNull(),
    /** the source given to rows that name none */
    source: varchar({ length: 64 }).notNull(),
    status: varchar({ length: 16 }).$type<(typeof IMPORT_STATUSES)[number]>().notNull().default('queued'),
    total: integer(),
    chunksDone: integer().notNull().default(0),
    processed: integer().notNull().default(0),
    createdRows: integer().notNull().default(0),
    updatedRows: integer().notNull().default(0),
    unchangedRows: integer().notNull().default(0),
    rejectedRows: integer().notNull().default(0),
    rejectedSample: jsonb().$type<RejectedPerformanceRow[]>().notNull().default([]),
    error: text(),
    created: created(),
    startedAt: at(),
    finishedAt: at(),
  },
  (table) => [index('performance_imports_organization_idx').on(table.organizationId, table.created)],
)

/** An uploaded performance file in parts of 1 MiB (numbered from 1), kept until its import has read it. */
export const performanceUploads = pgTable(
  'performance_uploads',
  {
    importId: uuid()
      .notNull()
      .references(() => performanceImports.id, { onDelete: 'cascade' }),
    part: integer().notNull().default(1),
    content: bytea().notNull(),
  },
  (table) => [primaryKey({ columns: [table.importId, table.part] })],
)

/** What the platform owes a retailer for one calendar month (UTC) of its campaigns' spend. */
export const revenueShares = pgTable(
  'revenue_shares',
  {
    id: id(),
    /** the retailer's organization */
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    retailerId: uuid()
      .notNull()
      .references(() => retailers.id, { onDelete: 'cascade' }),
    periodStart: date({ mode: 'string' }).notNull(),
    periodEnd: date({ mode: 'string' }).notNull(),
    // Unbounded (migration 0021): a month sums every tenant's campaigns on the retailer, and their
    // number has no limit. Written in cents (the calculation rounds half-even to 2 decimals).
    grossRevenue: numeric().notNull(),
    platformFee: numeric().notNull(),
    retailerShare: numeric().notNull(),
    platformFeeRate: numeric({ precision: 5, scale: 4 }).notNull(),
    status: varchar({ length: 16 }).$type<ShareStatus>().notNull().default('CALCULATED'),
    metadata: metadata(),
    paidAt: at(),
    paymentTransferId: varchar({ length: 255 }).notNull().default(''),
    calculatedAt: at().notNull().defaultNow(),
    created: created(),
    modified: at().notNull().defaultNow(),
  },
  (table) => [
    unique('revenue_shares_retailer_period_key').on(table.retailerId, table.periodStart),
    index('revenue_shares_organization_idx').on(table.organizationId, table.periodStart),
  ],
)
