import { Type } from '@sinclair/typebox'
import { type TSchema, t } from 'elysia'
import { QueryInteger } from './schema-types'

// Optional (with their defaults) so the typed client and the OpenAPI document need neither.
export const PageQuery = t.Object({
  page: t.Optional(
    QueryInteger('page', {
      minimum: 1,
      maximum: 2_147_483_647,
      default: 1,
      description: 'page number, from 1 (past the last page, data is empty)',
    }),
  ),
  page_size: t.Optional(
    QueryInteger('page_size', { minimum: 1, maximum: 100, default: 25, description: 'items per page, 1-100' }),
  ),
})
export type PageQuery = typeof PageQuery.static

// Response integers are TypeBox's plain Integer: Elysia's t.Integer carries a coercion transform,
// which makes Elysia run Value.Encode over every response of the schema.
export const Pagination = t.Object({
  page: Type.Integer(),
  page_size: Type.Integer(),
  total_count: Type.Integer(),
  total_pages: Type.Integer(),
  has_next: t.Boolean(),
  has_previous: t.Boolean(),
})

export const Page = <T extends TSchema>(item: T) => t.Object({ data: t.Array(item), pagination: Pagination })

export type PageOf<T> = { data: T[]; pagination: typeof Pagination.static }

/**
 * One round trip in the common case: `rows` returns the page with the window count
 * `total_count` on each row; only a page past the end needs the separate `count`.
 */
export async function paginate<R extends { total_count: number | string }, T>(
  { page = 1, page_size = 25 }: PageQuery,
  rows: (limit: number, offset: number) => Promise<R[]>,
  count: () => Promise<number>,
  toResource: (row: R) => T,
): Promise<PageOf<T>> {
  const found = await rows(page_size, (page - 1) * page_size)
  const total_count = found.length > 0 ? Number(found[0]?.total_count) : page > 1 ? await count() : 0
  const total_pages = Math.ceil(total_count / page_size)
  return {
    data: found.map(toResource),
    pagination: { page, page_size, total_count, total_pages, has_next: page < total_pages, has_previous: page > 1 },
  }
}

/** A user's text for a LIKE pattern, matched as a plain substring. */
export const likeSubstring = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
