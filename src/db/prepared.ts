const statements = new Map<string, unknown>()

/**
 * A named prepared statement, built on first use (after the database is connected) and reused:
 * PostgreSQL parses and plans it once per connection instead of on every request.
 */
export function prepared<T>(name: string, build: (name: string) => T): T {
  let statement = statements.get(name) as T | undefined
  if (statement === undefined) {
    statement = build(name)
    statements.set(name, statement)
  }
  return statement
}
