import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  char,
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
import { dataSource, products } from './catalog'
import { at, bytea, created, id } from './columns'
import { retailers } from './retailers'

/** The scope of feed records that are not a retailer's; the runner of the platform's. */
export const NIL_SCOPE = '00000000-0000-0000-0000-000000000000'

export const FEED_SOURCES = ['off', 'usda', 'affiliate'] as const
export const FEED_FORMATS = ['off_jsonl', 'off_csv', 'usda_csv', 'usda_json', 'merchant_csv'] as const
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const

export type RejectedRow = { line: number; reason: string; input: string }

/** One import of one file: what it read and what came of it (counts are summed from its chunks). */
export const feedRuns = pgTable(
  'feed_runs',
  {
    id: id(),
    /** the organization that sees it: the key's that started it, a schedule's; null for the admin token and CLI */
    organizationId: uuid().references(() => organizations.id, { onDelete: 'cascade' }),
    /**
     * Whose statement it is: the organization whose key started it (its values are that
     * organization's, weighted as a crowd contribution); null for the platform (admin token, CLI,
     * schedules), whose runs carry their source's weight.
     */
    contributorId: uuid().references(() => organizations.id, { onDelete: 'cascade' }),
    source: varchar({ length: 16 }).$type<(typeof FEED_SOURCES)[number]>().notNull(),
    format: varchar({ length: 16 }).$type<(typeof FEED_FORMATS)[number]>().notNull(),
    /** the file's name as given (an upload's name, or the server path) */
    file: varchar({ length: 1024 }).notNull(),
    /** the server path read, or null when the file was uploaded (feed_uploads) */
    path: varchar({ length: 4096 }),
    retailerId: uuid().references(() => retailers.id, { onDelete: 'cascade' }),
    full: boolean().notNull().default(false),
    options: jsonb().$type<Record<string, unknown>>().notNull().default({}),
    status: varchar({ length: 16 }).$type<(typeof RUN_STATUSES)[number]>().notNull().default('queued'),
    /** set when the whole file has been cut into chunks */
    chunksTotal: integer(),
    bytesTotal: bigint({ mode: 'number' }),
    bytesRead: bigint({ mode: 'number' }).notNull().default(0),
    disappearedCount: integer(),
    disappearedSample: jsonb().$type<string[]>(),
    error: text(),
    created: created(),
    startedAt: at(),
    finishedAt: at(),
  },
  (table) => [index('feed_runs_organization_created_idx').on(table.organizationId, table.created)],
)

/** An uploaded feed file in parts of 1 MiB (numbered from 1), kept until its run has read it. */
export const feedUploads = pgTable(
  'feed_uploads',
  {
    runId: uuid()
      .notNull()
      .references(() => feedRuns.id, { onDelete: 'cascade' }),
    part: integer().notNull().default(1),
    content: bytea().notNull(),
  },
  (table) => [primaryKey({ columns: [table.runId, table.part] })],
)

/** A slice of a run's records: its own job, written once (idempotent by run and number). */
export const feedRunChunks = pgTable(
  'feed_run_chunks',
  {
    runId: uuid()
      .notNull()
      .references(() => feedRuns.id, { onDelete: 'cascade' }),
    chunk: integer().notNull(),
    status: varchar({ length: 16 }).$type<'queued' | 'done'>().notNull().default('queued'),
    /**
     * the records to write, as the reader's thread wrote their JSON; cleared once written. Text, not
     * json or jsonb: stored and read back once, never queried inside, so PostgreSQL only copies and
     * compresses it (migration 0040: lz4 where the server has it, else pglz; as json it parsed the
     * text to check it, as jsonb it built a tree and printed it back)
     */
    payload: text(),
    read: integer().notNull().default(0),
    created: integer().notNull().default(0),
    updated: integer().notNull().default(0),
    unchanged: integer().notNull().default(0),
    rejected: integer().notNull().default(0),
    readings: jsonb().$type<Record<string, number>>().notNull().default({}),
    rejectedSample: jsonb().$type<RejectedRow[]>().notNull().default([]),
    finishedAt: at(),
  },
  (table) => [primaryKey({ columns: [table.runId, table.chunk] })],
)

/**
 * What a source last said of a product, per runner: a content hash to skip unchanged rows, and
 * which full import last saw it (to tell which products a full dump no longer has). `scope` is the
 * retailer of an affiliate feed, else the nil UUID; `contributorId` the organization whose runs
 * these are, the nil UUID for the platform's.
 */
export const feedRecords = pgTable(
  'feed_records',
  {
    source: dataSource().notNull(),
    scope: uuid().notNull(),
    /** the GTIN-14, or a merchant's item id in an affiliate feed (one GTIN may have several items) */
    key: varchar({ length: 255 }).notNull(),
    contributorId: uuid().notNull().default(NIL_SCOPE),
    gtin: char({ length: 14 }).notNull(),
    /** No foreign key, as product_candidates' (migration 0035); deleted with its product by trigger. */
    productId: uuid().notNull(),
    contentHash: varchar({ length: 32 }).notNull(),
    version: bigint({ mode: 'number' }).notNull().default(0),
    reading: varchar({ length: 32 }).notNull(),
    lastRunId: uuid().notNull(),
    fullRunId: uuid(),
  },
  (table) => [
    primaryKey({ columns: [table.source, table.scope, table.contributorId, table.key] }),
    // the records a full run saw (a run id names its source, scope and runner); not sharing the
    // primary key's leading columns, so a lookup by key never picks it (migration 0037)
    index('feed_records_full_run_idx').on(table.fullRunId).where(sql`${table.fullRunId} is not null`),
  ],
)

export const AVAILABILITIES = ['in_stock', 'out_of_stock', 'preorder', 'backorder'] as const

/** A retailer's offer of a product, from its affiliate feed (identified by the merchant's item id). */
export const offers = pgTable(
  'offers',
  {
    id: id(),
    retailerId: uuid()
      .notNull()
      .references(() => retailers.id, { onDelete: 'cascade' }),
    productId: uuid()
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    itemId: varchar({ length: 255 }).notNull(),
    title: text().notNull().default(''),
    price: numeric({ precision: 16, scale: 4 }).notNull(),
    regularPrice: numeric({ precision: 16, scale: 4 }).notNull(),
    currency: char({ length: 3 }).notNull(),
    url: varchar({ length: 2048 }).notNull(),
    availability: varchar({ length: 16 }).$type<(typeof AVAILABILITIES)[number]>().notNull(),
    multipack: integer(),
    observedAt: at().notNull(),
    created: created(),
    modified: at().notNull().defaultNow(),
  },
  (table) => [
    unique('offers_retailer_item_key').on(table.retailerId, table.itemId),
    index('offers_product_idx').on(table.productId, table.retailerId),
  ],
)
