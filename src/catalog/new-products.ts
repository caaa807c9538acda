import { getTableColumns, is, SQL, sql } from 'drizzle-orm'
import { toSnakeCase } from 'drizzle-orm/casing'
import { config } from '../config'
import { isUniqueViolation } from '../db/errors'
import { arrayParam, columnParam } from '../db/params'
import { products } from '../db/schema'
import type { DATA_SOURCES } from '../db/schema/catalog'
import { inSavepoint, type Tx } from '../db/tx'
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

/** How a column's values travel: an array of their own type, or of text read per row as the column's type. */
function carrierOf(key: (typeof WRITTEN)[number]): {
  array: 'uuid' | 'float8' | 'text'
  cast: string | null
  encode: (v: unknown) => unknown
} {
  const type = COLUMNS[key].getSQLType()
  if (type === 'uuid') return { array: 'uuid', cast: null, encode: (v) => v }
  if (type === 'double precision' || type === 'real') return { array: 'float8', cast: type, encode: (v) => v }
  if (type === 'jsonb') return { array: 'text', cast: 'jsonb', encode: (v) => JSON.stringify(v) }
  // a text[] value as its array literal, every element quoted
  if (type === 'text[]')
    return {
      array: 'text',
      cast: 'text[]',
      encode: (v) => `{${(v as unknown[]).map((e) => `"${String(e).replace(/[\\"]/g, '\\$&')}"`).join(',')}}`,
    }
  return { array: 'text', cast: type, encode: (v) => v }
}

/** A column's value in a row of the arrays (`value`), else the column's default (a row leaves out what was not decided). */
function readColumn(key: (typeof WRITTEN)[number], value: SQL): SQL {
  const column = COLUMNS[key]
  const fallback = column.default
  if (!column.notNull || fallback === undefined) return value
  if (is(fallback, SQL)) return sql`coalesce(${value}, ${fallback})`
  if (typeof fallback === 'string' || typeof fallback === 'number') return sql`coalesce(${value}, ${fallback})`
  return sql`coalesce(${value}, ${JSON.stringify(fallback)}::jsonb)`
}

/**
 * The new products' rows as one array per column some row gives (the others take their defaults),
 * and what the insert selects from them. Arrays, not one JSON document: json_to_recordset took 45 ms
 * of a 2,500-row chunk's 106 ms to read the rows back into columns.
 */
function rowsAsArrays(rows: Record<string, unknown>[]) {
  const given = new Set<string>()
  for (const row of rows) for (const key in row) given.add(key)
  const written = WRITTEN.filter((k) => given.has(SNAKE.get(k)!))
  const columnsOf = written.map((k) => {
    const name = SNAKE.get(k)!
    const { array, cast, encode } = carrierOf(k)
    // each row's value read and encoded once, straight into the column's array literal
    const read = (row: Record<string, unknown>) => {
      const value = row[name]
      return value === undefined || value === null ? null : encode(value)
    }
    if (cast !== 'jsonb')
      return { array: columnParam(rows, read, array), value: sql.raw(`r."${name}"${cast ? `::${cast}` : ''}`) }
    // A JSON value is sent once and each row names it by its place: PostgreSQL parses each distinct
    // text once per statement, not once per row (field_confidence read row by row as jsonb took
    // 3.4 µs of a new product's ~21; a chunk's new products of one source mostly share one value)
    const distinct = new Map<string, number>()
    const place = (row: Record<string, unknown>) => {
      const text = read(row) as string | null
      if (text === null) return null
      const at = distinct.get(text)
      if (at !== undefined) return at
      distinct.set(text, distinct.size + 1)
      return distinct.size
    }
    const places = columnParam(rows, place, 'int8') // fills `distinct`
    return {
      array: places,
      value: sql`(${arrayParam([...distinct.keys()], 'jsonb')})[${sql.raw(`r."${name}"`)}::int]`,
    }
  })
  const arrays = columnsOf.map((c) => c.array)
  const brands = columnParam(rows, (row) => row.brand ?? null, 'text')
  const columns = [...written.map((k) => `"${SNAKE.get(k)}"`), 'brand'].join(', ')
  return {
    names: sql.join(
      written.map((k) => sql.identifier(SNAKE.get(k)!)),
      sql`, `,
    ),
    read: sql.join(
      written.map((k, n) => readColumn(k, columnsOf[n]!.value)),
      sql`, `,
    ),
    from: sql`unnest(${sql.join([...arrays, brands], sql`, `)}) as r(${sql.raw(columns)})`,
  }
}

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
 * travel as one array per column, joined once to the chunk's brands. A GTIN that another transaction made
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
  { search = 'now', plainFirst = true }: { search?: 'now' | 'later'; plainFirst?: boolean } = {},
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
  const { names, read, from } = rowsAsArrays(rows)
  // the chunk's unowned brands found once (brands_unowned_name_key: one each) and joined to the
  // rows, not looked up by a subquery per row; the rows still in GTIN order
  // (lowered by PostgreSQL, as the index is: JavaScript's case mapping is not the database's)
  const named = sql`array(select lower(n) from unnest(${arrayParam([...new Set(brands)], 'text')}) n)`
  const insert = (skipMade: boolean) => sql`insert into products (${names}, brand_id)
    select ${read}, b.id
    from ${from} left join (select id, lower(name) as key from brands
      where organization_id is null and lower(name) = any(${named})) b on b.key = lower(r.brand)
    order by r.gtin
    ${skipMade ? sql`on conflict (gtin) do nothing returning id, gtin` : sql``}`
  // The caller read these GTINs as absent, so a plain insert first, in a savepoint: ON CONFLICT makes
  // every row a speculative insertion. Only when another transaction made one meanwhile (23505) is
  // the insert made again, skipping those.
  // Without `plainFirst` (a chunk being bisected) the insert skips made GTINs at once: each savepoint
  // that writes holds a subtransaction id until the chunk commits, and past 64 every snapshot in the
  // cluster reads pg_subtrans.
  // The plain insert writes every row or fails, and the ids are made here: it returns nothing (a
  // chunk's 2,500 rows read back cost the server's main thread 0.5-0.9 µs a row to parse, I3's
  // figure, on the thread that sets the import's pace); only the skipping insert says what it wrote.
  const plain = async () => {
    try {
      await inSavepoint(tx, () => tx.execute(insert(false)))
      return true
    } catch (err) {
      if (!isUniqueViolation(err)) throw err
      return false
    }
  }
  if (plainFirst && (await plain())) for (const row of rows) made.set(row.gtin as string, row.id as string)
  else for (const r of (await tx.execute<{ id: string; gtin: string }>(insert(true))).rows) made.set(r.gtin, r.id)
  await (search === 'later' ? markSearchDocuments : refreshSearchDocuments)(tx, 'product', [...made.values()], {
    fresh: true,
  })
  return made
}
