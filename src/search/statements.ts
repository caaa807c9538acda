import type { SQL } from 'drizzle-orm'
import { PgDialect, PgTransaction } from 'drizzle-orm/pg-core'
import { preparedPool } from '../db/client'
import type { Executor } from '../db/tx'

const dialect = new PgDialect()
/** Prepared statement names by text; past MAX_PREPARED distinct texts, statements are sent unnamed. */
const names = new Map<string, string>()
const MAX_PREPARED = 256

/**
 * Runs a search statement. Outside a transaction it goes to the prepared pool (`preparedPool`): each
 * distinct text is prepared once per connection and runs its generic plan, so a search pays no
 * planning (the statements' shapes, not the words searched, choose their plans: ordered walks and GIN
 * lookups). In a transaction it runs there, as any other statement.
 */
export async function run<T>(ex: Executor, query: SQL): Promise<T[]> {
  if (ex instanceof PgTransaction) return (await ex.execute(query)).rows as T[]
  const { sql: text, params } = dialect.sqlToQuery(query)
  let name = names.get(text)
  if (!name && names.size < MAX_PREPARED) {
    name = `search_${names.size}`
    names.set(text, name)
  }
  const result = await preparedPool().query({ name, text, values: params })
  return result.rows as T[]
}
