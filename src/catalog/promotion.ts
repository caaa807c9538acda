import { and, asc, getTableColumns, inArray, isNotNull, or, sql } from 'drizzle-orm'
import { toSnakeCase } from 'drizzle-orm/casing'
import { arrayParam } from '../db/params'
import { brands, products } from '../db/schema'
import type { DATA_SOURCES } from '../db/schema/catalog'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { markSearchDocuments, refreshSearchDocuments } from '../search'
import { notFound } from '../shared/errors'
import { brandKey, brandsFor } from './brands'
import { type ContributableField, FIELD_COLUMNS, normalizeField, type ProductField } from './fields'
import { normalizeGtin } from './gtin'
import { analyzeIngredients } from './ingredients/analyze'
import { type Candidate, candidatesOfMany, decide, recordCandidates, summarize, type Winner } from './provenance'
import { promoteQueue } from './queues'
import { findProduct, type ProductWithBrand, selectProducts, toProductResource } from './resource'

type Contributed = Partial<Record<ContributableField, string>>

/**
 * A crowd contribution (202): stored as candidates from the contributing organization, and a
 * `catalog.promote` job queued in the same transaction. Date labels are flagged on read, not rejected.
 * Of a product another organization has claimed, it is kept but decides nothing (speaksFor).
 */
export async function contribute(ex: Executor, organizationId: string, gtinInput: string, fields: Contributed) {
  const gtin = normalizeGtin(gtinInput)
  return inTransaction(ex, async (tx) => {
    const found = await findProduct(tx, gtin)
    if (!found) throw notFound('product')
    // stored as the API stores a product's own values ("us" -> "US"), so they agree with them
    const normalized = Object.fromEntries(
      Object.entries(fields).map(([field, value]) => [field, normalizeField(field as ProductField, value)]),
    )
    await recordCandidates(tx, found.product.id, normalized, 'crowd_sourced', organizationId)
    await promoteQueue.send(tx, { productId: found.product.id })
    return { gtin, accepted: Object.keys(fields), status: 'queued for promotion' }
  })
}

/**
 * Applies the decided canonical values to the product (the `catalog.promote` job). Idempotent:
 * running it again changes nothing; `product.updated` is emitted only when something changed.
 */
export async function promoteProduct(ex: Executor, productId: string) {
  return (await promoteProducts(ex, [productId])).length > 0
}

type Decided = { row: ProductWithBrand; winners: Map<string, Winner> }

/** A product column's name in the database (the schema's keys are camelCase; the tables snake_case). */
const COLUMN_NAMES = new Map(Object.keys(getTableColumns(products)).map((k) => [k, toSnakeCase(k)]))

/** The columns of a product row keyed by schema name, as jsonb_populate_recordset reads them. */
const byColumnName = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [COLUMN_NAMES.get(k)!, v]))

/**
 * Writes many products' new values in one statement per set of changed columns (a chunk's
 * products usually share one): the rows travel as JSON and `jsonb_populate_recordset` types them
 * by the table's own columns. Each update is `{id, <column key>: value, …}`.
 */
async function updateProducts(tx: Tx, updates: Record<string, unknown>[]) {
  const groups = Map.groupBy(updates, (u) => Object.keys(u).sort().join(','))
  for (const [signature, rows] of groups) {
    const names = signature.split(',').map((k) => COLUMN_NAMES.get(k)!)
    const json = rows.map(byColumnName)
    const sets = sql.join(
      names.filter((n) => n !== 'id').map((n) => sql`${sql.identifier(n)} = r.${sql.identifier(n)}`),
      sql`, `,
    )
    await tx.execute(sql`update products p set ${sets}
      from jsonb_populate_recordset(null::products, ${JSON.stringify(json)}::jsonb) r where p.id = r.id`)
  }
}

/**
 * Emits the event for each product an organization holds (its owner, or its brand's), with the
 * product as the API shows it now. A product nobody holds emits nothing (contract §7): no endpoint
 * could receive it, and a feed makes such products by the million. Internal readers (search) are
 * told by their own marks, not by events.
 */
async function announce(tx: Tx, eventType: 'product.created' | 'product.updated', ids: string[]) {
  if (ids.length === 0) return
  const after = await selectProducts(tx).where(
    and(
      sql`${products.id} = any(${arrayParam(ids, 'uuid')})`,
      or(isNotNull(products.ownerId), isNotNull(brands.organizationId)),
    ),
  )
  await emit(
    tx,
    ...after.map((p) => ({
      eventType,
      organizationId: p.product.ownerId,
      subjectId: p.product.id,
      data: toProductResource(p),
    })),
  )
}

/** Each product column's empty value: its default ('' for text), else null. */
const EMPTY = new Map(
  Object.entries(getTableColumns(products)).map(([key, column]) => [
    key,
    column.notNull && typeof column.default === 'string' ? column.default : null,
  ]),
)

type StatedTags = { certifications: string[]; contains: string[]; mayContain: string[] }

/**
 * The tag lists sources stated (candidates like any value; `labels` is the older name of
 * certifications), or null when they stated none.
 */
function statedTags(winners: Map<string, Winner>): StatedTags | null {
  const tags = (field: string) => {
    const value = winners.get(field)?.value
    return Array.isArray(value) ? (value as string[]) : null
  }
  const stated = {
    certifications: [...(tags('certifications') ?? []), ...(tags('labels') ?? [])],
    contains: tags('contains_allergens') ?? [],
    mayContain: tags('may_contain_allergens') ?? [],
  }
  return Object.values(stated).some((list) => list.length > 0) ? stated : null
}

/** The derived columns: what the ingredient text says, with the tags sources stated. */
function derivedColumns(text: string | null | undefined, stated: StatedTags | null) {
  const a = analyzeIngredients(text)
  // the analysis's own order when no tags add to it (an unchanged product stays unchanged)
  const union = (found: string[], tagged: string[]) =>
    tagged.length ? [...new Set([...found, ...tagged])].sort() : found
  return {
    containsAllergens: union(a.contains, stated?.contains ?? []),
    mayContainAllergens: union(a.mayContain, stated?.mayContain ?? []),
    certifications: [...new Set([...a.certifications, ...(stated?.certifications ?? [])])].sort(),
    substances: a.substances,
  }
}

/**
 * The column changes the winners make to a product (the brand is resolved by the caller). With
 * `reset`, a field no statement decides any more goes back to empty (a claim taken over: the former
 * owner's values stop speaking for the product).
 */
function changesOf({ row, winners }: Decided, reset = false) {
  const before = row.product
  const changes: Record<string, unknown> = {}
  for (const [field, winner] of winners) {
    const column = FIELD_COLUMNS[field as ProductField]
    if (column && JSON.stringify(before[column]) !== JSON.stringify(winner.value)) changes[column] = winner.value
  }
  if (reset)
    for (const [field, column] of Object.entries(FIELD_COLUMNS)) {
      const empty = EMPTY.get(column)
      if (!winners.has(field) && before[column] !== empty) changes[column] = empty
    }
  const stated = statedTags(winners)
  if (typeof changes.ingredientsText === 'string' || stated) {
    const derived = derivedColumns((changes.ingredientsText as string | undefined) ?? before.ingredientsText, stated)
    for (const [column, value] of Object.entries(derived))
      if (JSON.stringify(before[column as keyof typeof before]) !== JSON.stringify(value)) changes[column] = value
  }
  return changes
}

/**
 * The values of a product not yet stored, from its winners: what changesOf gives against an empty
 * row, without comparing to one (every decided value, the derived arrays when there is an
 * ingredient text or a tag), with the brand by name for the caller to resolve, and the summary.
 */
export function firstValues(winners: Map<string, Winner>) {
  const columns: Record<string, unknown> = {}
  for (const [field, winner] of winners) {
    const column = FIELD_COLUMNS[field as ProductField]
    if (column && winner.value !== null) columns[column] = winner.value
  }
  const stated = statedTags(winners)
  if (typeof columns.ingredientsText === 'string' || stated)
    Object.assign(columns, derivedColumns(columns.ingredientsText as string | undefined, stated))
  const brand = winners.get('brand')?.value
  return { columns, brand: typeof brand === 'string' && brand ? brand : null, summary: summarize(winners) }
}

/**
 * Search documents of written products (and brands): built now, in the writer's transaction, or
 * with 'later' (a bulk writer) marked for the search drain.
 */
type SearchWhen = { search?: 'now' | 'later' }
const searchDocuments = (tx: Tx, when: SearchWhen['search'], ids: string[]) =>
  (when === 'later' ? markSearchDocuments : refreshSearchDocuments)(tx, 'product', ids)

/**
 * Promotion of many products in one transaction (feeds promote a chunk at once): their rows and
 * candidates are read in two statements, brands resolved together, and an event emitted for each
 * product that changed (new products are made by insertDecidedProducts, which announces them).
 * Rows are locked in id order, so concurrent promotions cannot deadlock. Returns the ids that
 * changed. Their search documents follow `search` (default 'now').
 */
export function promoteProducts(ex: Executor, productIds: string[], options: { reset?: boolean } & SearchWhen = {}) {
  return inTransaction(ex, async (tx) => {
    if (productIds.length === 0) return []
    const rows = await selectProducts(tx)
      .where(inArray(products.id, productIds))
      .orderBy(asc(products.id))
      .for('update', { of: products })
    const candidates = Map.groupBy(await candidatesOfMany(tx, productIds), (c) => c.productId)
    // of a claimed product, only its owner's and the platform's statements decide (speaksFor)
    const decided: Decided[] = rows.map((row) => ({
      row,
      winners: decide(candidates.get(row.product.id) ?? [], row.product.ownerId ?? row.brandOrg),
    }))
    const brandIds = await brandsFor(
      tx,
      decided.flatMap(({ row, winners }) => {
        const brand = winners.get('brand')?.value
        return typeof brand === 'string' && brand && brand !== row.brandName
          ? [{ organizationId: row.brandOrg, name: brand }]
          : []
      }),
      { search: options.search },
    )
    const updates: Record<string, unknown>[] = []
    const modified = new Date()
    for (const d of decided) {
      const { product } = d.row
      const changes = changesOf(d, options.reset)
      const brand = d.winners.get('brand')?.value
      if (typeof brand === 'string' && brand && brand !== d.row.brandName)
        changes.brandId = brandIds.get(brandKey(d.row.brandOrg, brand))
      const summary = summarize(d.winners)
      if (
        Object.keys(changes).length === 0 &&
        JSON.stringify(summary.fieldConfidence) === JSON.stringify(product.fieldConfidence)
      )
        continue
      updates.push({ id: product.id, ...changes, ...summary, modified })
    }
    await updateProducts(tx, updates)
    const changed = updates.map((u) => u.id as string)
    await searchDocuments(tx, options.search, changed)
    await announce(tx, 'product.updated', changed)
    return changed
  })
}

/** A product not yet in the catalog, with what its first source says of it. */
export type NewProduct = {
  id: string
  gtin: string
  dataSource: (typeof DATA_SOURCES)[number]
  candidates: Candidate[]
}

/**
 * New products written once, with their decided values: promotion as promoteProducts decides it,
 * from the candidates in hand (a product not yet made has no others). Inserting them empty and
 * promoting after would write every index entry twice. One insert per set of columns; a GTIN that
 * another transaction made meanwhile is skipped (not in the returned set: the caller treats it as
 * an existing product). `product.created` is emitted for each product made. The caller writes the
 * candidates themselves. Their search documents follow `search` (default 'now').
 */
export async function insertDecidedProducts(
  tx: Tx,
  list: NewProduct[],
  { search }: SearchWhen = {},
): Promise<Set<string>> {
  if (list.length === 0) return new Set()
  // a product with nothing stored yet: every decided value is a change
  const decided = list.map((p) => ({ p, values: firstValues(decide(p.candidates)) }))
  const brandIds = await brandsFor(
    tx,
    decided.flatMap(({ values }) => (values.brand ? [{ organizationId: null, name: values.brand }] : [])),
    { search },
  )
  const rows = decided.map(({ p, values: { columns, brand, summary } }) => ({
    id: p.id,
    gtin: p.gtin,
    dataSource: p.dataSource,
    ...columns,
    ...(brand ? { brandId: brandIds.get(brandKey(null, brand)) } : {}),
    ...summary,
  }))
  const made = new Set<string>()
  for (const [signature, group] of Map.groupBy(rows, (r) => Object.keys(r).sort().join(','))) {
    const names = sql.join(
      signature.split(',').map((k) => sql.identifier(COLUMN_NAMES.get(k)!)),
      sql`, `,
    )
    const inserted = await tx.execute<{ id: string }>(sql`insert into products (${names})
      select ${names} from jsonb_populate_recordset(null::products, ${JSON.stringify(group.map(byColumnName))}::jsonb)
      on conflict (gtin) do nothing returning id`)
    for (const r of inserted.rows) made.add(r.id)
  }
  await searchDocuments(tx, search, [...made])
  await announce(tx, 'product.created', [...made])
  return made
}
