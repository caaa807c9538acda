import { bigint, index, integer, jsonb, pgTable, primaryKey, text, uuid, varchar } from 'drizzle-orm/pg-core'
import { at, bytea, created } from './columns'

/**
 * POSTs sent with an Idempotency-Key (src/http/idempotency.ts): the request's fingerprint and, once
 * answered, its response, replayed for 24 h. A row with `lock_token` set and no response is a
 * request still running. Swept by a pg-boss schedule (src/observability/queues.ts).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    /** `org:<organization uuid>` or `admin` */
    scope: varchar({ length: 64 }).notNull(),
    key: varchar({ length: 255 }).notNull(),
    /** the API key id (or `admin`) that sent it: another caller's request is never replayed */
    caller: varchar({ length: 64 }).notNull(),
    method: varchar({ length: 16 }).notNull(),
    /** path and query */
    path: text().notNull(),
    contentType: varchar({ length: 255 }).notNull().default(''),
    requestBytes: bigint({ mode: 'number' }),
    /** sha256 (hex) of the body, known once the body has been read through */
    requestHash: varchar({ length: 64 }),
    lockToken: uuid(),
    responseStatus: integer(),
    responseHeaders: jsonb().$type<Record<string, string>>(),
    responseBody: bytea(),
    created: created(),
    finishedAt: at(),
  },
  (table) => [
    primaryKey({ columns: [table.scope, table.key] }),
    index('idempotency_keys_created_idx').on(table.created),
  ],
)
