import { customType, jsonb, timestamp, uuid } from 'drizzle-orm/pg-core'
import type { Metadata } from '../../shared/metadata'

export const id = () => uuid().primaryKey().defaultRandom()
/** A point in time (timestamptz), read as a Date. */
export const at = () => timestamp({ withTimezone: true, mode: 'date' })
export const created = () => at().notNull().defaultNow()
export const metadata = () => jsonb().$type<Metadata>().notNull().default({})

/** Raw bytes (an uploaded file), read as a Buffer. */
export const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' })

/** A full-text document; written by PostgreSQL (generated columns), never read by the app. */
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' })
