import { index, integer, jsonb, pgEnum, pgTable, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'
import { organizations } from './accounts'
import { created, id } from './columns'

export const batchStatus = pgEnum('barcode_batch_status', ['queued', 'running', 'succeeded', 'failed'])

export type BatchItem = { gtin: string; label?: string }
export type BatchRowError = { row: number; input: string; reason: string }

/** A barcode batch export; rendered by the `barcode.batch` job to a file under DATA_DIR/batches. */
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
    filePath: text(),
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
