import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { CAMPAIGN_STATUSES, IMPORT_STATUSES, PRICING_MODELS, SHARE_STATUSES } from '../db/schema/advertising'
import { DecimalInput, SPEC_DECIMAL } from '../shared/decimal'
import { Id, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Chars, Enum } from '../shared/schema-types'

const DateTime = t.String({ format: 'date-time' })
const Decimal = (description: string) => t.String({ pattern: SPEC_DECIMAL, description })
/**
 * A day of the years 0001-9999 (PostgreSQL's `date` has no year 0, and JavaScript's Date would take
 * it); whether the day exists in its month is checked where the value is used (`isCalendarDate`).
 */
const DateOnly = (description: string) =>
  t.String({
    pattern: '^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$',
    format: 'date',
    error: 'must be a date YYYY-MM-DD of the years 0001-9999',
    description,
  })

export const CampaignStatus = Enum(CAMPAIGN_STATUSES, {
  description:
    'draft → active; active ⇄ paused; active or paused → completed; completed → archived. Any other move is 409 naming the allowed next states.',
})

export const Campaign = t.Object(
  {
    id: ShortId,
    organization_id: ShortId,
    retailer_id: ShortId,
    name: Chars(255),
    status: CampaignStatus,
    allowed_next_statuses: t.Array(CampaignStatus, { description: 'the moves `status` may make from here' }),
    budget: Decimal('USD, at least two decimals'),
    pricing_model: Enum(PRICING_MODELS),
    rate: Decimal('USD per click (CPC) or per thousand impressions (CPM)'),
    currency: t.Literal('USD'),
    start_date: t.Union([DateOnly('first day (UTC)'), t.Null()]),
    end_date: t.Union([DateOnly('last day (UTC)'), t.Null()]),
    metadata: MetadataOut,
    created: DateTime,
    modified: DateTime,
  },
  { 'x-schema-name': 'Campaign' },
)

const campaignFields = {
  budget: DecimalInput(6, 'USD, a decimal string (up to 6 decimals)'),
  pricing_model: Enum(PRICING_MODELS, { description: 'CPC (cost per click) or CPM (cost per thousand impressions)' }),
  rate: DecimalInput(6, 'USD per click (CPC) or per thousand impressions (CPM), a decimal string'),
  start_date: t.Union([DateOnly('first day (UTC)'), t.Null()]),
  end_date: t.Union([DateOnly('last day (UTC), not before start_date'), t.Null()]),
  metadata: MetadataIn,
}

export const CampaignCreate = t.Object(
  {
    name: Chars(255, { minLength: 1 }),
    retailer_id: Id('retailer_id'),
    budget: campaignFields.budget,
    pricing_model: campaignFields.pricing_model,
    rate: campaignFields.rate,
    start_date: t.Optional(campaignFields.start_date),
    end_date: t.Optional(campaignFields.end_date),
    metadata: t.Optional(campaignFields.metadata),
  },
  { additionalProperties: false },
)

export const CampaignPatch = t.Object(
  {
    name: t.Optional(Chars(255, { minLength: 1 })),
    retailer_id: t.Optional(Id('retailer_id')),
    status: t.Optional(CampaignStatus),
    budget: t.Optional(campaignFields.budget),
    pricing_model: t.Optional(campaignFields.pricing_model),
    rate: t.Optional(campaignFields.rate),
    start_date: t.Optional(campaignFields.start_date),
    end_date: t.Optional(campaignFields.end_date),
    metadata: t.Optional(campaignFields.metadata),
  },
  { additionalProperties: false },
)

export const CampaignParams = t.Object({ campaign_id: Id('campaign_id') })
export const OrganizationParams = t.Object({ organization_id: Id('organization_id') })

const Count = Type.Integer({ minimum: 0 })
const CTR =
  'clicks / impressions, rounded half-even to 6 decimals (trailing zeros dropped); "0" when there are no impressions'
const CPC =
  'spend / clicks in USD, rounded half-even to 4 decimals (trailing zeros dropped); "0" when there are no clicks'
const CPM =
  'spend × 1000 / impressions in USD, rounded half-even to 4 decimals (trailing zeros dropped); "0" when there are no impressions'
const SPEND = 'USD, the exact sum of the reported spend (kept to 6 decimals, shown with at least 2)'

export const CampaignSummary = t.Object(
  {
    campaign_id: ShortId,
    campaign_name: t.String(),
    status: CampaignStatus,
    totals: t.Object({
      impressions: Count,
      clicks: Count,
      spend: Decimal(SPEND),
      ctr: Decimal(CTR),
      effective_cpc: Decimal(CPC),
      effective_cpm: Decimal(CPM),
    }),
  },
  { 'x-schema-name': 'CampaignSummary' },
)

export const CampaignListItem = t.Object(
  {
    campaign_id: ShortId,
    name: t.String(),
    status: CampaignStatus,
    impressions: Count,
    clicks: Count,
    spend: Decimal(SPEND),
    ctr: Decimal(CTR),
  },
  { 'x-schema-name': 'CampaignListItem' },
)

export const CampaignList = t.Object({ organization_id: ShortId, campaigns: t.Array(CampaignListItem) })

const Source = Chars(64, {
  minLength: 1,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
  error: 'must be 1-64 letters, digits, ".", "_", ":" or "-"',
  description:
    'who reported the row (an ad server, a retailer network); rows are idempotent by campaign, date and source',
})

export const PerformanceRow = t.Object(
  {
    date: DateOnly('the UTC day the figures cover'),
    impressions: Type.Integer({ minimum: 0, maximum: 1e12 }),
    clicks: Type.Integer({ minimum: 0, maximum: 1e12 }),
    spend: DecimalInput(6, 'USD spent that day, a decimal string (up to 6 decimals)'),
    source: t.Optional(Source),
  },
  { additionalProperties: false },
)

export const PerformanceRows = t.Array(PerformanceRow, { minItems: 1, maxItems: 1000 })

const WriteCounts = {
  created: Type.Integer({ minimum: 0, description: 'rows new to the campaign' }),
  updated: Type.Integer({
    minimum: 0,
    description: 'rows that replaced different figures for the same day and source',
  }),
  unchanged: Type.Integer({ minimum: 0, description: 'rows equal to what was stored (re-sent rows change nothing)' }),
}

export const PerformanceWritten = t.Object({
  campaign_id: ShortId,
  received: Count,
  counts: t.Object(WriteCounts),
  totals: CampaignSummary.properties.totals,
})

export const PerformanceImport = t.Object(
  {
    id: ShortId,
    status: Enum(IMPORT_STATUSES),
    file_name: t.String(),
    format: Enum(['csv', 'jsonl']),
    source: t.String({ description: 'the source of rows that name none' }),
    total: t.Union([Count, t.Null()], { description: 'data rows in the file, once read' }),
    processed: Count,
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'percent of the rows processed' }),
    counts: t.Object({
      ...WriteCounts,
      rejected: Type.Integer({ minimum: 0, description: 'rows refused (see errors)' }),
    }),
    errors: t.Array(t.Object({ row: Count, input: t.String(), reason: t.String() }), {
      description: 'the first 20 rejected rows (rows count data rows from 1)',
    }),
    error: t.Union([t.String(), t.Null()], { description: 'why the import failed, when it did' }),
    created: DateTime,
    started_at: t.Union([DateTime, t.Null()]),
    finished_at: t.Union([DateTime, t.Null()]),
  },
  { 'x-schema-name': 'PerformanceImport' },
)

export const ImportQuery = t.Object({
  source: t.Optional(Source),
  format: t.Optional(
    Enum(['csv', 'jsonl'], { description: 'detected from the content type and content when omitted' }),
  ),
  file_name: t.Optional(Chars(255, { minLength: 1 })),
})
export const ImportParams = t.Object({ import_id: Id('import_id') })

const ShareStatus = Enum(SHARE_STATUSES, {
  description:
    'CALCULATED → APPROVED → PAID (needs payment_transfer_id; sets paid_at); CALCULATED, APPROVED or PAID → DISPUTED. Other moves are 409.',
})

export const RevenueShare = t.Object(
  {
    id: ShortId,
    organization_id: ShortId,
    retailer_id: ShortId,
    period_start: t.String({ format: 'date', description: 'first day of the calendar month (UTC)' }),
    period_end: t.String({ format: 'date', description: 'last day of the calendar month (UTC)' }),
    gross_revenue: Decimal("USD: the month's spend of the retailer's campaigns, rounded half-even to cents"),
    platform_fee: Decimal('USD: gross_revenue × platform_fee_rate, rounded half-even to cents'),
    retailer_share: Decimal('USD: gross_revenue − platform_fee, so the two always sum to gross_revenue'),
    platform_fee_rate: Decimal('0.00-1.00'),
    status: ShareStatus,
    metadata: MetadataOut,
    paid_at: t.Union([DateTime, t.Null()]),
    payment_transfer_id: Chars(255),
    calculated_at: DateTime,
    created: DateTime,
    modified: DateTime,
  },
  { 'x-schema-name': 'RevenueShare' },
)

export const ShareParams = t.Object({ organization_id: Id('organization_id'), share_id: Id('share_id') })

export const ShareQuery = t.Composite([
  PageQuery,
  t.Object({
    status: t.Optional(ShareStatus),
    period_start: t.Optional(DateOnly('only the share of the month starting on this day')),
    retailer_id: t.Optional(Id('retailer_id')),
  }),
])

export const SharePatch = t.Object(
  {
    status: t.Optional(ShareStatus),
    payment_transfer_id: t.Optional(
      Chars(255, { minLength: 1, description: "the payment processor's transfer id; given with status PAID" }),
    ),
    metadata: t.Optional(MetadataIn),
  },
  { additionalProperties: false },
)

const Period = t.String({
  pattern: '^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])$',
  error: 'must be a month YYYY-MM of the years 0001-9999',
  description: 'YYYY-MM (years 0001-9999)',
})
const FeeRate = Chars(6, {
  pattern: '^(0(\\.[0-9]{1,4})?|1(\\.0{1,4})?)$',
  error: 'must be a decimal string from 0 to 1 with at most 4 decimals',
  description: 'platform fee rate for this run (default PLATFORM_FEE_RATE)',
})

export const CalculateBody = t.Object(
  { period: Period, platform_fee_rate: t.Optional(FeeRate) },
  { additionalProperties: false },
)

export const CalculateAccepted = t.Object({
  period: t.String(),
  period_start: t.String({ format: 'date' }),
  period_end: t.String({ format: 'date' }),
  platform_fee_rate: t.String(),
  job_id: t.String({ description: 'the pg-boss job computing it' }),
})
