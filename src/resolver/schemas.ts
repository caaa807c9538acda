import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { SCOPE_TYPES } from '../db/schema/resolver'
import { Id, IdInput, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Chars, Enum } from '../shared/schema-types'

const Scope = Enum(SCOPE_TYPES, {
  description:
    'ORGANIZATION (every product the organization holds), BRAND (its products of one brand), PRODUCT, BATCH (one lot of a product) or SERIAL (one serialised item)',
})

const DateTime = t.String({ format: 'date-time' })
const Nullable = <T extends ReturnType<typeof t.String>>(schema: T) => t.Union([schema, t.Null()])
/** Contract §6: every condition field is nullable; a null list is stored as the empty list (no condition). */
const NullableList = <T extends ReturnType<typeof t.Array>>(schema: T) =>
  t.Union([schema, t.Null()], { description: `${schema.description}; null or empty means no condition` })

/**
 * RFC 3339 date-time (contract §6) with a year of 1000-9999: Elysia's `date-time` format also takes
 * a bare date, and `+275760-…` or year 0 parse in JavaScript yet overflow PostgreSQL (a 500 before);
 * a stored year below 100 reads back a century off (2001 for 0001), so no rule reaches that far.
 * Whether the day exists in its month is checked when the rule is stored.
 */
const RFC3339 =
  '^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$'
const DATE_TIME_ERROR =
  'must be an RFC 3339 date-time with a time zone and a year from 1000 to 9999 (2026-05-01T00:00:00Z), or null'
/** The union carries the message: a union's own error would only say "expected union value". */
const RuleDateTime = (description: string) =>
  t.Union([t.String({ format: 'date-time', pattern: RFC3339, error: DATE_TIME_ERROR }), t.Null()], {
    error: DATE_TIME_ERROR,
    description,
  })

const MMDD = t.String({
  pattern: '^[0-9]{2}-[0-9]{2}$',
  error: 'must be MM-DD',
  description: 'MM-DD; the window may wrap the new year (12-20 to 01-05)',
})
const HHMM = t.String({
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  error: 'must be HH:MM (24-hour)',
  description: 'HH:MM, 24-hour, in `timezone`; the end is exclusive and may be before the start (wraps midnight)',
})

const CustomUrl = Chars(2048, {
  minLength: 1,
  description: 'absolute http(s) URL the link resolves to (query and fragment allowed)',
})

// Written and read with the same limits (the stored values passed them), so the OpenAPI document
// shows a client the same bounds on both sides.
const SectionAnchor = Chars(255, { pattern: '^[^\\s#]*$', error: 'must be a fragment without # or spaces' })
const MediaType = Chars(100, {
  pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+$',
  error: 'must be a media type such as text/html',
})
const Hreflang = Chars(35, {
  pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
  error: 'must be a BCP 47 language tag such as en or fr-CA',
})
const Weekday = Type.Integer({ minimum: 1, maximum: 7 })
const OrderIndex = (description: string) => Type.Integer({ minimum: 0, maximum: 1_000_000, description })

/** Every field of the spec's "Resolution rule" table, plus the link's title, media type and languages. */
export const Rule = t.Object(
  {
    id: ShortId,
    organization_id: ShortId,
    scope_type: Scope,
    scope_id: Chars(64, {
      description:
        'ORGANIZATION: the organization id; BRAND: the brand id; PRODUCT: the product id; BATCH: the lot (AI 10); SERIAL: the serial number (AI 21)',
    }),
    product_id: t.Union([ShortId, t.Null()], { description: 'the product of a PRODUCT, BATCH or SERIAL rule' }),
    order_index: OrderIndex('lower first among rules of the same scope'),
    enabled: t.Boolean(),
    created: DateTime,
    modified: DateTime,
    metadata: MetadataOut,
    absolute_start_at: t.Union([DateTime, t.Null()]),
    absolute_end_at: t.Union([DateTime, t.Null()]),
    annual_start_mmdd: Nullable(MMDD),
    annual_end_mmdd: Nullable(MMDD),
    days_of_week: t.Array(Weekday, { maxItems: 7, uniqueItems: true }),
    time_of_day_start: Nullable(HHMM),
    time_of_day_end: Nullable(HHMM),
    timezone: Chars(64),
    link_type: Chars(100),
    location_countries: t.Array(Chars(2), { maxItems: 250, uniqueItems: true }),
    location_regions: t.Array(Chars(6), { maxItems: 500, uniqueItems: true }),
    location_cities: t.Array(Chars(100), { maxItems: 500, uniqueItems: true }),
    custom_url: CustomUrl,
    section_anchor: SectionAnchor,
    title: Chars(255, { description: "the link's title in linksets; empty means the link type's title" }),
    media_type: t.Unsafe<string>({ ...MediaType, description: 'media type of the target, for linksets' }),
    hreflang: t.Array(Hreflang, {
      maxItems: 20,
      uniqueItems: true,
      description: 'languages of the target (BCP 47), for linksets',
    }),
  },
  { 'x-schema-name': 'ResolutionRule' },
)

const fields = {
  scope_id: t.Optional(
    Chars(64, {
      minLength: 1,
      description:
        'BRAND: the brand id (required); BATCH/SERIAL: the lot or serial value (required, GS1 AI 10/21 format); ORGANIZATION and PRODUCT: may be omitted (filled in)',
    }),
  ),
  product_id: t.Optional(t.Union([IdInput, t.Null()], { description: 'required for PRODUCT, BATCH and SERIAL' })),
  order_index: t.Optional(OrderIndex('default 0')),
  enabled: t.Optional(t.Boolean({ description: 'default true' })),
  metadata: t.Optional(MetadataIn),
  absolute_start_at: t.Optional(RuleDateTime('the rule applies from then on')),
  absolute_end_at: t.Optional(RuleDateTime('the rule applies until then (exclusive); after absolute_start_at')),
  annual_start_mmdd: t.Optional(Nullable(MMDD)),
  annual_end_mmdd: t.Optional(Nullable(MMDD)),
  days_of_week: t.Optional(
    NullableList(
      t.Array(Weekday, {
        maxItems: 7,
        uniqueItems: true,
        description: 'ISO weekdays, 1 (Monday) to 7 (Sunday), in `timezone`',
      }),
    ),
  ),
  time_of_day_start: t.Optional(Nullable(HHMM)),
  time_of_day_end: t.Optional(Nullable(HHMM)),
  timezone: t.Optional(Chars(64, { minLength: 1, description: 'IANA time zone name; default UTC' })),
  link_type: t.Optional(
    Chars(100, {
      minLength: 1,
      description:
        'a GS1 Web Vocabulary link type in CURIE form (gs1:pip, gs1:recallStatus, …); default gs1:defaultLink',
    }),
  ),
  location_countries: t.Optional(
    NullableList(
      t.Array(Chars(2, { minLength: 2 }), {
        maxItems: 250,
        uniqueItems: true,
        description: 'ISO 3166-1 alpha-2 codes; the caller must be in one',
      }),
    ),
  ),
  location_regions: t.Optional(
    NullableList(
      t.Array(Chars(6, { minLength: 4 }), {
        maxItems: 500,
        uniqueItems: true,
        description: 'ISO 3166-2 codes (US-CA); the caller must be in one',
      }),
    ),
  ),
  location_cities: t.Optional(
    NullableList(
      t.Array(Chars(100, { minLength: 1 }), {
        maxItems: 500,
        uniqueItems: true,
        description: 'city names, compared case-insensitively; the caller must be in one',
      }),
    ),
  ),
  section_anchor: t.Optional(
    t.Unsafe<string>({ ...SectionAnchor, description: 'appended to the target as its #fragment' }),
  ),
  title: t.Optional(Chars(255)),
  media_type: t.Optional(t.Unsafe<string>({ ...MediaType, description: 'default text/html' })),
  hreflang: t.Optional(t.Array(Hreflang, { maxItems: 20, uniqueItems: true, description: 'default ["en"]' })),
}

export const RuleCreate = t.Object(
  { scope_type: Scope, custom_url: CustomUrl, ...fields },
  { additionalProperties: false },
)
export const RulePatch = t.Object(
  { scope_type: t.Optional(Scope), custom_url: t.Optional(CustomUrl), ...fields },
  { additionalProperties: false },
)
export type RuleInput = typeof RulePatch.static

export const RuleQuery = t.Composite([
  PageQuery,
  t.Object({
    scope_type: t.Optional(Scope),
    enabled: t.Optional(
      t.Union([t.Literal('true'), t.Literal('false')], {
        error: 'must be true or false',
        description: 'true: only enabled rules; false: only disabled ones; omitted: both',
      }),
    ),
  }),
])

export const RulesParams = t.Object({ organization_id: Id('organization_id') })
export const RuleParams = t.Object({ organization_id: Id('organization_id'), rule_id: Id('rule_id') })
