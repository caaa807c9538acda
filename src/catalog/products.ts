import { and, asc, eq, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { isUniqueViolation } from '../db/errors'
import { prepared } from '../db/prepared'
import { brands, productCountDeltas, products } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { refreshSearchDocuments } from '../search'
import { AppError, type FieldError, notFound } from '../shared/errors'
import { mergeMetadata } from '../shared/metadata'
import { type PageQuery, paginate } from '../shared/pagination'
import { brandFor, brandRecord, organizationProfile } from './brands'
import { dateLabelViolations } from './date-labels'
import { FIELD_COLUMNS, normalizeField, type ProductField } from './fields'
import { normalizeGtin } from './gtin'
import { analyzeIngredients } from './ingredients/analyze'
import { pageRunner, pageSelection } from './list-rows'
import { refuseForeignPrefix } from './prefixes'
import {
  candidateRows,
  candidatesOf,
  decide,
  insertCandidates,
  PROVENANCE_FIELDS,
  recordCandidates,
  summarize,
} from './provenance'
import { findProduct, selectProducts, toProductResource } from './resource'
import type { ProductCreate, ProductPatch } from './schemas'
import { sendVerificationSignals } from './verification'

/** 422 `date_label_violation` naming each field and phrase (AB 660); registration only. */
function rejectDateLabels(input: ProductPatch) {
  const found = dateLabelViolations(input)
  if (found.length === 0) return
  const errors: FieldError[] = found.map((v) => ({
    field: v.field,
    message: `contains the prohibited date label "${v.phrase}": ${v.why}`,
  }))
  throw new AppError('date_label_violation', errors.map((e) => `${e.field} ${e.message}`).join('; '), errors)
}

/** Column values for the scalar fields present in the input. */
function columnsFrom(input: ProductPatch) {
  const values: Record<string, unknown> = {}
  for (const [field, column] of Object.entries(FIELD_COLUMNS)) {
    const value = input[field as ProductField]
    if (value !== undefined) values[column] = normalizeField(field as ProductField, value)
  }
  return values
}

function ingredientColumns(text: string | undefined) {
  if (text === undefined) return {}
  const a = analyzeIngredients(text)
  return {
    containsAllergens: a.contains,
    mayContainAllergens: a.mayContain,
    certifications: a.certifications,
    substances: a.substances,
  }
}

/**
 * Spec #11: the record, claimed for the key's organization; 409 `gtin_exists` when the GTIN is
 * there, 409 `conflict` when it is under a GS1 company prefix another organization holds.
 */
export async function createProduct(ex: Executor, organizationId: string, input: ProductCreate) {
  const gtin = normalizeGtin(input.gtin)
  if (input.organization_id && input.organization_id !== organizationId)
    throw new AppError('forbidden', 'organization_id must be the organization of the API key')
  rejectDateLabels(input)
  try {
    return await inTransaction(ex, async (tx) => {
      await refuseForeignPrefix(tx, organizationId, gtin, 'create')
      const org = await organizationProfile(tx, organizationId)
      // spec: brand is empty when no brand is linked; none is made up from the organization's name
      const brand = input.brand ? await brandRecord(tx, organizationId, input.brand) : null
      // a new product's candidates are exactly the ones given: decided here, written with it
      const id = crypto.randomUUID()
      const candidates = candidateRows(id, input, 'claimed', organizationId)
      const [row] = await tx
        .insert(products)
        .values({
          id,
          gtin,
          ...columnsFrom(input),
          ...ingredientColumns(input.ingredients_text),
          brandId: brand?.id ?? null,
          ownerId: organizationId,
          claimVerificationStatus: 'unverified',
          dataSource: 'claimed',
          metadata: mergeMetadata({}, input.metadata),
          ...summarize(decide(candidates)),
        })
        .returning()
      await insertCandidates(tx, candidates)
      await refreshSearchDocuments(tx, 'product', [id])
      const resource = toProductResource({
        product: row!,
        brandName: brand?.name ?? null,
        brandOrg: brand ? organizationId : null,
      })
      await emit(tx, { eventType: 'product.created', organizationId, subjectId: id, data: resource })
      await sendVerificationSignals(tx, id, organizationId, gtin, org.prefixes)
      return resource
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('gtin_exists', `${gtin} is already in the catalog; claim it instead`)
    throw err
  }
}

const productByGtin = () =>
  prepared('products_by_gtin', (name) =>
    selectProducts(db)
      .where(eq(products.gtin, sql.placeholder('gtin')))
      .prepare(name),
  )

export async function getProduct(gtinInput: string) {
  const [found] = await productByGtin().execute({ gtin: normalizeGtin(gtinInput) })
  if (!found) throw notFound('product')
  return toProductResource(found)
}

export type ProductFilter = { organization_id?: string; claimed?: 'true' | 'false' }

/**
 * The list's statement for one shape of filter (which filters are given, not their values), built
 * and prepared once: building the select of every product column cost the server more per page than
 * the page's SQL cost PostgreSQL. The organization and the page enter as placeholders.
 */
function listStatement(filter: ProductFilter) {
  const shape = `${filter.organization_id ? 'org' : 'any'}_${filter.claimed ?? 'all'}`
  return prepared(`products_list_${shape}`, (name) => {
    const conditions: SQL[] = []
    if (filter.organization_id) conditions.push(eq(products.ownerId, sql.placeholder('organization_id')))
    // is_claimed: an owner, or a brand that belongs to an organization (toProductResource)
    if (filter.claimed === 'true') conditions.push(or(isNotNull(products.ownerId), isNotNull(brands.organizationId))!)
    if (filter.claimed === 'false') conditions.push(and(isNull(products.ownerId), isNull(brands.organizationId))!)
    const where = conditions.length ? and(...conditions) : undefined
    // Unfiltered, the exact total is the sum of the product count's deltas (migration 0028), read in
    // the page's own statement and snapshot: a window count read every one of a million rows.
    const total = where
      ? sql<number>`count(*) over ()`
      : sql<number>`(select coalesce(sum(${productCountDeltas.delta}), 0)::bigint from ${productCountDeltas})`
    const count = where
      ? db
          .select({ n: sql<number>`count(*)::int` })
          .from(products)
          .leftJoin(brands, eq(brands.id, products.brandId))
          .where(where)
          .prepare(`${name}_count`)
      : db.select({ n: total }).from(sql`(select) as one`).prepare(`${name}_count`)
    const page = pageRunner(
      name,
      db
        .select(pageSelection(total))
        .from(products)
        .leftJoin(brands, eq(brands.id, products.brandId))
        .where(where)
        .orderBy(asc(products.gtin))
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset'))
        .$dynamic(),
    )
    return { page, count }
  })
}

export function listProducts(filter: ProductFilter, page: PageQuery) {
  const statement = listStatement(filter)
  const organization_id = filter.organization_id
  return paginate(
    page,
    (limit, offset) => statement.page({ limit, offset, organization_id }),
    async () => Number((await statement.count.execute({ organization_id }))[0]?.n ?? 0),
    (r) => toProductResource(r),
  )
}

/** Locks the product for a change by its owner: 404 when absent, 403 when another organization owns it. */
export async function lockOwned(tx: Tx, organizationId: string, gtin: string) {
  const found = await findProduct(tx, gtin, true)
  if (!found) throw notFound('product')
  if (found.product.ownerId !== organizationId)
    throw new AppError('forbidden', 'only the organization that owns the product can change it')
  return found
}

/** Whether every field of a patch is already the owner's latest value for it (so it would change nothing). */
async function restatesOwner(tx: Tx, productId: string, patch: ProductPatch) {
  const given = PROVENANCE_FIELDS.filter((f) => patch[f] !== undefined)
  if (given.length === 0) return true
  const latest = new Map<string, unknown>()
  for (const c of await candidatesOf(tx, productId)) if (c.source === 'claimed') latest.set(c.field, c.value)
  return given.every((f) => latest.has(f) && JSON.stringify(latest.get(f)) === JSON.stringify(patch[f]))
}

/** Partial update by the owner: metadata merges, compliance and ingredient parsing run again. */
export async function updateProduct(ex: Executor, organizationId: string, gtinInput: string, patch: ProductPatch) {
  const gtin = normalizeGtin(gtinInput)
  rejectDateLabels(patch)
  return inTransaction(ex, async (tx) => {
    const found = await lockOwned(tx, organizationId, gtin)
    const { product } = found
    // a contested claim speaks with no owner's authority (owner values win outright): release it or wait
    if (product.claimVerificationStatus === 'disputed' || product.claimVerificationStatus === 'rejected')
      throw new AppError(
        'conflict',
        `the claim on ${gtin} is ${product.claimVerificationStatus}: its record cannot be changed until the claim is settled`,
      )
    const metadata = mergeMetadata(product.metadata, patch.metadata)
    // a patch that restates what the owner already said changes nothing: no write, no event
    if (JSON.stringify(metadata) === JSON.stringify(product.metadata) && (await restatesOwner(tx, product.id, patch)))
      return toProductResource(found)
    const brandId = patch.brand ? await brandFor(tx, organizationId, patch.brand) : undefined
    const confidence = await recordCandidates(tx, product.id, patch, 'claimed', organizationId)
    await tx
      .update(products)
      .set({
        ...columnsFrom(patch),
        ...ingredientColumns(patch.ingredients_text),
        ...(brandId ? { brandId } : {}),
        metadata,
        ...confidence,
        modified: new Date(),
      })
      .where(eq(products.id, product.id))
    await refreshSearchDocuments(tx, 'product', [product.id])
    const resource = toProductResource((await findProduct(tx, gtin))!)
    await emit(tx, { eventType: 'product.updated', organizationId, subjectId: product.id, data: resource })
    return resource
  })
}
