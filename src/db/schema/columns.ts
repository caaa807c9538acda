import { customType, jsonb, timestamp, uuid } from 'drizzle-orm/pg-core'
import type { Metadata } from '../../shared/metadata'

export const id = () => uuid().primaryKey().defaultRandom()
export const created = () => timestamp({ withTimezone: true, mode: 'date' }).notNull().defaultNow()
export const metadata = () => jsonb().$type<Metadata>().notNull().default({})

/** A full-text document; written by PostgreSQL (generated columns), never read by the app. */
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' })
