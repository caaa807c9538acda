import {
  bigint,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import { organizations } from './accounts'
import { bytea, created, id } from './columns'

export const batchStatus = pgEnum('barcode_batch_status', ['queued', 'running', 'succeeded', 'failed'])

export type BatchItem = { gtin: string; label?: string }
export type BatchRowError = { row: number; input: string; reason: string }

/**
 * A barcode batch export; rendered by the `barcode.batch` job to a file under BATCH_DIR, then kept
 * in `barcode_outputs` (BATCH_STORE=postgres) or in that file (BATCH_STORE=directory).
 */
export const barcodeBatches = pgTable(
  'barcode_batches',
  {
    id: id(),
    organizationId: uuid()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    status: batchStatus().notNull().default('queued'),
    items: jsonb().$type<BatchItem[]>().notNull(),
    settings: jsonb().$type<Record<string, unknown>>().notNull(),
    output: varchar({ length: 8 }).notNull(),
    template: varchar({ length: 16 }),
    total: integer().notNull(),
    completed: integer().notNull().default(0),
    errors: jsonb().$type<BatchRowError[]>().notNull().default([]),
    /** The output file, when it is kept in a directory (BATCH_STORE=directory). */
    filePath: text(),
    /** Where the output is kept once succeeded: `postgres` (barcode_outputs) or `directory` (filePath). */
    outputStore: varchar({ length: 16 }),
    outputBytes: bigint({ mode: 'number' }),
    failure: text(),
    created: created(),
    finishedAt: timestamp({ withTimezone: true, mode: 'date' }),
    /** When the output file is removed (BATCH_RETENTION_HOURS after success). */
    expiresAt: timestamp({ withTimezone: true, mode: 'date' }),
    /** When it was removed; the download is 410 from then on. */
    expiredAt: timestamp({ withTimezone: true, mode: 'date' }),
  },
  (table) => [index('barcode_batches_organization_created_idx').on(table.organizationId, table.created)],
)

/** A succeeded batch's output in the database, in chunks of up to 1 MiB numbered from 0. */
export const barcodeOutputs = pgTable(
  'barcode_outputs',
  {
    batchId: uuid()
      .notNull()
      .references(() => barcodeBatches.id, { onDelete: 'cascade' }),
    seq: integer().notNull(),
    bytes: bytea().notNull(),
  },
  (table) => [primaryKey({ columns: [table.batchId, table.seq] })],
)
