import { type Column, fillPlaceholders, getTableColumns, type SQL } from 'drizzle-orm'
import type { PgSelect } from 'drizzle-orm/pg-core'
import pg from 'pg'
import { db } from '../db/client'
import { brands, products } from '../db/schema'
import type { ProductRow, ProductWithBrand } from './resource'

/**
 * The product list's page rows, read and mapped by hand: drizzle's generic mapping of a nested
 * selection (per value: its path, entity checks, the left join's all-null test) cost the server
 * about a tenth of a page's CPU. The statement is still built by drizzle (listStatement) and its
 * columns come back in the order selected here; each value goes through its column's own mapping,
 * after pg's parsers as drizzle's driver sets them (dates and times as text, mapped to Date by the
 * column), so a row is exactly what drizzle would have made of it.
 */
const PRODUCT_FIELDS = Object.entries(getTableColumns(products)) as [keyof ProductRow, Column][]

/** What the page selects, in this order: every product column, the brand's name and organization, the total. */
export const pageSelection = (total: SQL<number>) => ({
  product: getTableColumns(products),
  brandName: brands.name,
  brandOrg: brands.organizationId,
  total_count: total,
})

const RAW_TYPES = new Set<number>([
  pg.types.builtins.TIMESTAMPTZ,
  pg.types.builtins.TIMESTAMP,
  pg.types.builtins.DATE,
  pg.types.builtins.INTERVAL,
  1231, // numeric[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1187, // interval[]
  1182, // date[]
])
const asText = (value: string) => value
const types = {
  getTypeParser: (id: number, format?: 'text' | 'binary') =>
    RAW_TYPES.has(id) ? asText : pg.types.getTypeParser(id, format as 'text'),
}

export type PageRow = ProductWithBrand & { total_count: number | string }

/** Runs a page statement (built by drizzle from pageSelection) as a named prepared statement. */
export function pageRunner(name: string, query: PgSelect) {
  const { sql: text, params } = query.toSQL()
  const decode = PRODUCT_FIELDS.map(
    ([, column]) =>
      (value: unknown) =>
        column.mapFromDriverValue(value),
  )
  return async (values: Record<string, unknown>): Promise<PageRow[]> => {
    const result = await db.$client.query<unknown[]>({
      name,
      text,
      values: fillPlaceholders(params, values),
      rowMode: 'array',
      types,
    })
    return result.rows.map((row) => {
      const product = {} as Record<string, unknown>
      for (let i = 0; i < PRODUCT_FIELDS.length; i++) {
        const value = row[i]
        product[PRODUCT_FIELDS[i]![0]] = value === null ? null : decode[i]!(value)
      }
      const n = PRODUCT_FIELDS.length
      return {
        product: product as ProductRow,
        brandName: row[n] as string | null,
        brandOrg: row[n + 1] as string | null,
        total_count: row[n + 2] as number | string,
      }
    })
  }
}
