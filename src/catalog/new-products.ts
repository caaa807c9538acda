import { getTableColumns, is, SQL, sql } from 'drizzle-orm'
import { toSnakeCase } from 'drizzle-orm/casing'
import { config } from '../config'
import { products } from '../db/schema'
import type { DATA_SOURCES } from '../db/schema/catalog'
import type { Tx } from '../db/tx'
import { markSearchDocuments, refreshSearchDocuments } from '../search'
import { ensureUnownedBrands } from './brands'
import { FIELD_COLUMNS } from './fields'
import { firstValues } from './promotion'
import { decide, SOURCE_CONFIDENCE, type Winner } from './provenance'

type DataSource = (typeof DATA_SOURCES)[number]

/** One statement of a source: the values it gives a product's fields, normalised as stored. */
export type StatedValues = { field: string; value: unknown }[]

/** A product a source names for the first time, with the statements it makes of it (usually one). */
export type FirstStated = { gtin: string; statements: StatedValues[] }

/** The columns a new product is written with (the others keep their defaults), by schema key. */
const WRITTEN = [
  'id',
  'gtin',
  ...new Set(Object.values(FIELD_COLUMNS)),
  'containsAllergens',
  'mayContainAllergens',
  'certifications',
  'substances',
  'dataSource',
  'confidenceScore',
  'fieldConfidence',
] as const satisfies (keyof typeof products.$inferInsert)[]

const COLUMNS = getTableColumns(products)
const SNAKE = new Map<string, string>(WRITTEN.map((k) => [k, toSnakeCase(k)]))

/**
 * How a column is read from a row of the JSON the rows travel in: as it is when given, else the
 * column's default (a JSON row leaves out what was not decided).
 */
function readColumn(key: (typeof WRITTEN)[number]): SQL {
  const column = COLUMNS[key]
  const value = sql`r.${sql.identifier(SNAKE.get(key)!)}`
  const fallback = column.default
  if (!column.notNull || fallback === undefined) return value
  if (is(fallback, SQL)) return sql`coalesce(${value}, ${fallback})`
  if (typeof fallback === 'string' || typeof fallback === 'number') return sql`coalesce(${value}, ${fallback})`
  return sql`coalesce(${value}, ${JSON.stringify(fallback)}::jsonb)`
}

const NAMES = sql.join(
  WRITTEN.map((k) => sql.identifier(SNAKE.get(k)!)),
  sql`, `,
)
const READ = sql.join(WRITTEN.map(readColumn), sql`, `)
// the record type json_to_recordset reads each row as: the columns' own types, and the brand by name
const RECORD = sql.raw([...WRITTEN.map((k) => `"${SNAKE.get(k)}" ${COLUMNS[k].getSQLType()}`), 'brand text'].join(', '))

/**
 * What deciding a new product's fields finds. A product not yet stored has no candidates but the
 * ones in hand; of one statement alone, decide() finds each value the winner exactly when its
 * source's weight reaches the threshold, so that is taken without grouping and comparing. Several
 * statements (an affiliate feed's items of one GTIN) are decided as promotion decides them.
 */
function winnersOf(statements: StatedValues[], source: DataSource, contributorId: string | null, now: Date) {
  const confidence = SOURCE_CONFIDENCE[source]
  if (statements.length === 1) {
    const winners = new Map<string, Winner>()
    if (confidence >= config.PROMOTION_THRESHOLD - 1e-9)
      for (const { field, value } of statements[0]!) winners.set(field, { value, source, score: confidence })
    return winners
  }
  return decide(
    statements.flatMap((values, n) =>
      values.map(({ field, value }) => ({
        id: String(n),
        productId: '',
        field,
        value,
        source,
        confidence,
        contributorId,
        created: now,
      })),
    ),
  )
}

/**
 * New products of a source's statements, each written once with its decided values (what
 * insertDecidedProducts writes, for a feed chunk's thousands): the values decided and analysed
 * here, their unowned brands made when missing, then every product in one statement whose rows
 * travel as one JSON document, each finding its brand by name. A GTIN that another transaction made
 * meanwhile is skipped (not in the result: the caller treats it as an existing product). The
 * caller writes the candidates. They emit no event: no organization holds a product made here (it
 * has no owner, its brand none), so no endpoint could receive one (contract §7). Their search
 * documents follow `search`. Returns the product id of each GTIN made.
 */
export async function insertStatedProducts(
  tx: Tx,
  source: DataSource,
  contributorId: string | null,
  list: FirstStated[],
  { search = 'now' }: { search?: 'now' | 'later' } = {},
): Promise<Map<string, string>> {
  const made = new Map<string, string>()
  if (list.length === 0) return made
  const now = new Date()
  const brands: string[] = []
  const rows = list.map(({ gtin, statements }) => {
    const { columns, brand, summary } = firstValues(winnersOf(statements, source, contributorId, now))
    if (brand) brands.push(brand)
    const row: Record<string, unknown> = {
      // time-ordered: a new key lands at the end of the primary key's index, not on a random page
      // (200,000-row batches into the products table: 18 % faster than random UUIDs up to 1M rows)
      id: Bun.randomUUIDv7(),
      gtin,
      brand,
      data_source: summary.dataSource ?? source,
      confidence_score: summary.confidenceScore,
      field_confidence: summary.fieldConfidence,
    }
    for (const key in columns) row[SNAKE.get(key)!] = columns[key]
    return row
  })
  await ensureUnownedBrands(tx, brands, { search })
  // in GTIN order, so that concurrent chunks making the same products wait instead of deadlocking
  rows.sort((a, b) => ((a.gtin as string) < (b.gtin as string) ? -1 : 1))
  const inserted = await tx.execute<{ id: string; gtin: string }>(sql`insert into products (${NAMES}, brand_id)
    select ${READ}, (select b.id from brands b where b.organization_id is null and lower(b.name) = lower(r.brand))
    from json_to_recordset(${JSON.stringify(rows)}::json) as r(${RECORD})
    on conflict (gtin) do nothing returning id, gtin`)
  for (const r of inserted.rows) made.set(r.gtin, r.id)
  await (search === 'later' ? markSearchDocuments : refreshSearchDocuments)(tx, 'product', [...made.values()])
  return made
}
