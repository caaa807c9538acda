import { sql } from './fixtures'

/**
 * How many search marks wait for a row's document: a single write's marks are a row each
 * (search_index_pending), a bulk writer's a set of ids per marking statement (search_bulk_marks).
 */
export const marksOf = async (id: string) =>
  (
    await sql<{ n: number }>(
      `select (select count(*) from search_index_pending where id = $1)::int
        + (select count(*) from search_bulk_marks where $1::uuid = any(ids))::int as n`,
      [id],
    )
  )[0]!.n
