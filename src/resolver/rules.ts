import { and, eq, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { brands, products, resolutionRules } from '../db/schema'
import type { ScopeType } from '../db/schema/resolver'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { aiValueProblem } from '../shared/application-identifiers'
import { ASSIGNED_COUNTRIES } from '../shared/countries'
import { invalidField, notFound } from '../shared/errors'
import { parseId, toShortId } from '../shared/ids'
import { mergeMetadata } from '../shared/metadata'
import { type PageQuery, paginate } from '../shared/pagination'
import { HEADER_SAFE } from './conditions'
import { isSubdivision, isTimeZone, linkTypeProblem, parseMmdd, parseTimeOfDay } from './formats'
import type { RuleInput } from './schemas'

export type RuleRow = typeof resolutionRules.$inferSelect
type RuleValues = Omit<RuleRow, 'id' | 'created' | 'modified'>

/** Scopes whose `scope_id` is a row id (shown as a shortuuid); BATCH and SERIAL hold a lot or serial. */
const ID_SCOPES: ReadonlySet<ScopeType> = new Set(['ORGANIZATION', 'BRAND', 'PRODUCT'])

export const toRuleResource = (row: RuleRow) => ({
  id: toShortId(row.id),
  organization_id: toShortId(row.organizationId),
  scope_type: row.scopeType,
  scope_id: ID_SCOPES.has(row.scopeType) ? toShortId(row.scopeId) : row.scopeId,
  product_id: row.productId ? toShortId(row.productId) : null,
  order_index: row.orderIndex,
  enabled: row.enabled,
  created: row.created.toISOString(),
  modified: row.modified.toISOString(),
  metadata: row.metadata,
  absolute_start_at: row.absoluteStartAt?.toISOString() ?? null,
  absolute_end_at: row.absoluteEndAt?.toISOString() ?? null,
  annual_start_mmdd: row.annualStartMmdd,
  annual_end_mmdd: row.annualEndMmdd,
  days_of_week: row.daysOfWeek,
  time_of_day_start: row.timeOfDayStart,
  time_of_day_end: row.timeOfDayEnd,
  timezone: row.timezone,
  link_type: row.linkType,
  location_countries: row.locationCountries,
  location_regions: row.locationRegions,
  location_cities: row.locationCities,
  custom_url: row.customUrl,
  section_anchor: row.sectionAnchor,
  title: row.title,
  media_type: row.mediaType,
  hreflang: row.hreflang,
})
export type RuleResource = ReturnType<typeof toRuleResource>

const DEFAULTS = {
  scopeId: '',
  productId: null,
  orderIndex: 0,
  enabled: true,
  absoluteStartAt: null,
  absoluteEndAt: null,
  annualStartMmdd: null,
  annualEndMmdd: null,
  daysOfWeek: [],
  timeOfDayStart: null,
  timeOfDayEnd: null,
  timezone: 'UTC',
  linkType: 'gs1:defaultLink',
  locationCountries: [],
  locationRegions: [],
  locationCities: [],
  sectionAnchor: '',
  title: '',
  mediaType: 'text/html',
  hreflang: ['en'],
  metadata: {},
} satisfies Partial<RuleValues>

const date = (value: string | null | undefined) => (value === undefined ? undefined : value ? new Date(value) : null)

/**
 * 422 unless a given date-time names a day that exists and falls in years 1000-9999 (UTC): the
 * schema checks the form as written; an offset can still carry it past either end.
 */
function checkDateTimes(input: RuleInput) {
  for (const field of ['absolute_start_at', 'absolute_end_at'] as const) {
    const value = input[field]
    if (value === undefined || value === null) continue
    const at = new Date(value)
    const year = at.getUTCFullYear()
    // a day past its month's end (02-30) is rolled over by Date, or refused: either way not as written
    const sameDay = !Number.isNaN(year) && Number(value.slice(8, 10)) === dayOfMonth(value, at)
    if (!sameDay || year < 1000 || year > 9999)
      throw invalidField(field, 'must be an existing date and time with a year from 1000 to 9999 (UTC)')
  }
}

/** The day of the month of `at` in the offset the text was written in. */
function dayOfMonth(text: string, at: Date) {
  const offset = /([+-])([0-9]{2}):([0-9]{2})$/.exec(text)
  const minutes = offset ? (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) : 0
  return new Date(at.getTime() + minutes * 60_000).getUTCDate()
}

/** The stored values after applying `input` to `base` (the row, or the defaults on create). */
function merge(base: RuleValues, input: RuleInput): RuleValues {
  const rescoped = input.scope_type !== undefined && input.scope_type !== base.scopeType
  const pick = <K extends keyof RuleValues>(key: K, value: RuleValues[K] | undefined) =>
    value === undefined ? base[key] : value
  // a condition list given as null means no condition, stored as the empty list (contract §6)
  const list = <T, U>(value: T[] | null | undefined, kept: U[], map: (v: T[]) => U[]) =>
    value === undefined ? kept : value === null ? [] : map(value)
  const upper = (codes: string[]) => codes.map((c) => c.toUpperCase())
  return {
    organizationId: base.organizationId,
    scopeType: pick('scopeType', input.scope_type),
    // a rule moved to another scope names its target afresh
    scopeId: input.scope_id ?? (rescoped ? '' : base.scopeId),
    productId: input.product_id === undefined ? (rescoped ? null : base.productId) : input.product_id,
    orderIndex: pick('orderIndex', input.order_index),
    enabled: pick('enabled', input.enabled),
    absoluteStartAt: pick('absoluteStartAt', date(input.absolute_start_at)),
    absoluteEndAt: pick('absoluteEndAt', date(input.absolute_end_at)),
    annualStartMmdd: pick('annualStartMmdd', input.annual_start_mmdd),
    annualEndMmdd: pick('annualEndMmdd', input.annual_end_mmdd),
    daysOfWeek: list(input.days_of_week, base.daysOfWeek, (days) => [...days].sort()),
    timeOfDayStart: pick('timeOfDayStart', input.time_of_day_start),
    timeOfDayEnd: pick('timeOfDayEnd', input.time_of_day_end),
    timezone: pick('timezone', input.timezone),
    linkType: pick('linkType', input.link_type),
    locationCountries: list(input.location_countries, base.locationCountries, upper),
    locationRegions: list(input.location_regions, base.locationRegions, upper),
    locationCities: list(input.location_cities, base.locationCities, (cities) => cities),
    customUrl: pick('customUrl', input.custom_url),
    sectionAnchor: pick('sectionAnchor', input.section_anchor),
    title: pick('title', input.title),
    mediaType: pick('mediaType', input.media_type),
    hreflang: pick('hreflang', input.hreflang),
    metadata: mergeMetadata(base.metadata, input.metadata),
  }
}

const MAX_URL = 2048

/**
 * 422 unless an absolute http(s) URL. The URL is stored as written when it is printable ASCII;
 * an IRI (`https://ok.example/€`, an internationalised host) is stored percent-encoded (and the
 * host in punycode), as WHATWG URL writes it, so that it can go into a Location header.
 */
export function storedUrl(value: string, field = 'custom_url'): string {
  let url: URL | null = null
  try {
    url = new URL(value)
  } catch {}
  if (!url || !['http:', 'https:'].includes(url.protocol) || !url.hostname || /\s/.test(value))
    throw invalidField(field, 'must be an absolute http(s) URL')
  if (HEADER_SAFE.test(value)) return value
  if (url.href.length > MAX_URL || !HEADER_SAFE.test(url.href))
    throw invalidField(field, `must be at most ${MAX_URL} characters once percent-encoded`)
  return url.href
}

function checkPair(start: string | null, end: string | null, startField: string, endField: string) {
  if ((start === null) !== (end === null))
    throw invalidField(
      start === null ? startField : endField,
      `must be set together with ${start === null ? endField : startField}`,
    )
}

/** Contract §6 on the merged values (the URL normalised in place); 422 naming the first field that is wrong. */
function checkFormats(v: RuleValues) {
  v.customUrl = storedUrl(v.customUrl)
  const linkProblem = linkTypeProblem(v.linkType)
  if (linkProblem) throw invalidField('link_type', linkProblem)
  if (!isTimeZone(v.timezone))
    throw invalidField('timezone', 'must be an IANA time zone name such as America/Los_Angeles')
  if (v.absoluteStartAt && v.absoluteEndAt && v.absoluteStartAt >= v.absoluteEndAt)
    throw invalidField('absolute_end_at', 'must be after absolute_start_at')
  checkPair(v.annualStartMmdd, v.annualEndMmdd, 'annual_start_mmdd', 'annual_end_mmdd')
  for (const field of ['annual_start_mmdd', 'annual_end_mmdd'] as const) {
    const value = field === 'annual_start_mmdd' ? v.annualStartMmdd : v.annualEndMmdd
    if (value !== null && parseMmdd(value) === null)
      throw invalidField(field, 'must be MM-DD with a day that exists in that month (02-29 allowed)')
  }
  checkPair(v.timeOfDayStart, v.timeOfDayEnd, 'time_of_day_start', 'time_of_day_end')
  if (v.timeOfDayStart !== null && parseTimeOfDay(v.timeOfDayStart) === parseTimeOfDay(v.timeOfDayEnd ?? ''))
    throw invalidField('time_of_day_end', 'must differ from time_of_day_start (omit both for the whole day)')
  const country = v.locationCountries.find((c) => !ASSIGNED_COUNTRIES.has(c))
  if (country) throw invalidField('location_countries', `${country} is not an assigned ISO 3166-1 alpha-2 code`)
  const region = v.locationRegions.find((r) => !isSubdivision(r))
  if (region) throw invalidField('location_regions', `${region} is not an ISO 3166-2 subdivision code (such as US-CA)`)
}

async function ownedProduct(ex: Executor, organizationId: string, raw: string | null) {
  if (raw === null) return null
  const id = parseId(raw)
  const [row] = id
    ? await ex
        .select({ id: products.id })
        .from(products)
        .where(and(eq(products.id, id), eq(products.ownerId, organizationId)))
    : []
  if (!row) throw invalidField('product_id', 'must be the id of a product this organization holds')
  return row.id
}

/** Resolves and checks the scope: what `scope_id` and `product_id` are stored. */
async function checkScope(ex: Executor, v: RuleValues): Promise<Pick<RuleValues, 'scopeId' | 'productId'>> {
  const org = v.organizationId
  switch (v.scopeType) {
    case 'ORGANIZATION':
      if (v.productId !== null) throw invalidField('product_id', 'must be null for an ORGANIZATION rule')
      if (v.scopeId && parseId(v.scopeId) !== org)
        throw invalidField('scope_id', "must be the organization's own id (or omitted)")
      return { scopeId: org, productId: null }
    case 'BRAND': {
      if (v.productId !== null) throw invalidField('product_id', 'must be null for a BRAND rule')
      const id = v.scopeId ? parseId(v.scopeId) : null
      const [brand] = id
        ? await ex
            .select({ id: brands.id })
            .from(brands)
            .where(and(eq(brands.id, id), eq(brands.organizationId, org)))
        : []
      if (!brand) throw invalidField('scope_id', 'must be the id of a brand of this organization')
      return { scopeId: brand.id, productId: null }
    }
    case 'PRODUCT': {
      if (v.productId === null) throw invalidField('product_id', 'is required for a PRODUCT rule')
      const productId = (await ownedProduct(ex, org, v.productId))!
      if (v.scopeId && parseId(v.scopeId) !== productId)
        throw invalidField('scope_id', 'must be the product id (or omitted) for a PRODUCT rule')
      return { scopeId: productId, productId }
    }
    case 'BATCH':
    case 'SERIAL': {
      const [ai, what] = v.scopeType === 'BATCH' ? ['10', 'lot'] : ['21', 'serial number']
      if (v.productId === null) throw invalidField('product_id', `is required for a ${v.scopeType} rule`)
      const productId = (await ownedProduct(ex, org, v.productId))!
      if (!v.scopeId) throw invalidField('scope_id', `is required: the ${what} (GS1 AI ${ai})`)
      const problem = aiValueProblem(ai, v.scopeId)
      if (problem) throw invalidField('scope_id', problem)
      return { scopeId: v.scopeId, productId }
    }
  }
}

const emitRule = (tx: Tx, eventType: `resolution_rule.${'created' | 'updated' | 'deleted'}`, row: RuleRow) =>
  emit(tx, { eventType, organizationId: row.organizationId, subjectId: row.id, data: toRuleResource(row) })

export function createRule(
  ex: Executor,
  organizationId: string,
  input: RuleInput & { scope_type: ScopeType; custom_url: string },
) {
  checkDateTimes(input)
  return inTransaction(ex, async (tx) => {
    const values = merge({ ...DEFAULTS, organizationId, scopeType: input.scope_type, customUrl: '' }, input)
    checkFormats(values)
    const [row] = await tx
      .insert(resolutionRules)
      .values({ ...values, ...(await checkScope(tx, values)) })
      .returning()
    await emitRule(tx, 'resolution_rule.created', row!)
    return toRuleResource(row!)
  })
}

const ruleWhere = (organizationId: string, id: string) =>
  and(eq(resolutionRules.id, id), eq(resolutionRules.organizationId, organizationId))

async function lockRule(tx: Tx, organizationId: string, id: string) {
  const [row] = await tx.select().from(resolutionRules).where(ruleWhere(organizationId, id)).for('update')
  if (!row) throw notFound('resolution rule')
  return row
}

export async function getRule(organizationId: string, id: string) {
  const [row] = await db.select().from(resolutionRules).where(ruleWhere(organizationId, id))
  if (!row) throw notFound('resolution rule')
  return toRuleResource(row)
}

export type RuleFilter = { scope_type?: ScopeType; enabled?: boolean }

export function listRules(organizationId: string, filter: RuleFilter, page: PageQuery) {
  const where = and(
    eq(resolutionRules.organizationId, organizationId),
    filter.scope_type === undefined ? undefined : eq(resolutionRules.scopeType, filter.scope_type),
    filter.enabled === undefined ? undefined : eq(resolutionRules.enabled, filter.enabled),
  )
  return paginate(
    page,
    (limit, offset) =>
      db
        .select({ rule: resolutionRules, total_count: sql<number>`count(*) over ()` })
        .from(resolutionRules)
        .where(where)
        .orderBy(resolutionRules.created, resolutionRules.id)
        .limit(limit)
        .offset(offset),
    () => db.$count(resolutionRules, where),
    (r) => toRuleResource(r.rule),
  )
}

/** Partial update: omitted fields are kept, null clears a nullable one, metadata merges. */
export function updateRule(ex: Executor, organizationId: string, id: string, input: RuleInput) {
  checkDateTimes(input)
  return inTransaction(ex, async (tx) => {
    const row = await lockRule(tx, organizationId, id)
    const values = merge(row, input)
    checkFormats(values)
    const next = { ...values, ...(await checkScope(tx, values)) }
    const changed = (Object.keys(next) as (keyof RuleValues)[]).some(
      (k) => JSON.stringify(next[k]) !== JSON.stringify(row[k]),
    )
    if (!changed) return toRuleResource(row)
    const [updated] = await tx
      .update(resolutionRules)
      .set({ ...next, modified: sql`now()` })
      .where(eq(resolutionRules.id, id))
      .returning()
    await emitRule(tx, 'resolution_rule.updated', updated!)
    return toRuleResource(updated!)
  })
}

export function deleteRule(ex: Executor, organizationId: string, id: string) {
  return inTransaction(ex, async (tx) => {
    const row = await lockRule(tx, organizationId, id)
    await tx.delete(resolutionRules).where(eq(resolutionRules.id, id))
    await emitRule(tx, 'resolution_rule.deleted', row)
  })
}
