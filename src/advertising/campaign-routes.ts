import { Elysia } from 'elysia'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { UPLOAD_LIMIT, Upload, UploadBody, withUpload } from '../http/upload'
import { invalidField } from '../shared/errors'
import { createCampaign, getCampaign, updateCampaign } from './campaigns'
import { createImport, getImport } from './imports'
import { recordPerformance } from './performance'
import { campaignListResponse, campaignSummaryResponse } from './reports'
import {
  Campaign,
  CampaignCreate,
  CampaignList,
  CampaignParams,
  CampaignPatch,
  CampaignSummary,
  ImportParams,
  ImportQuery,
  OrganizationParams,
  PerformanceImport,
  PerformanceRows,
  PerformanceWritten,
} from './schemas'

const tags = ['Advertising']
const MONEY =
  'Money is USD as decimal strings (never JSON numbers), computed in PostgreSQL numeric; amounts keep up to 6 decimals and are shown with at least 2.'

export const campaignRoutes = new Elysia({ name: 'campaigns', prefix: '/advertising/api/v1' })
  .use(auth)
  .post(
    '/organizations/:organization_id/campaigns',
    async ({ apiKey, body, status }) =>
      status(201, await transaction((tx) => createCampaign(tx, apiKey.organizationId, body))),
    {
      auth: { role: 'editor', org: 'organization_id' },
      params: OrganizationParams,
      body: CampaignCreate,
      response: { 201: Campaign, ...errorResponses },
      detail: {
        tags,
        summary: 'Create a campaign',
        description: `A campaign starts as a draft. \`retailer_id\` is a retailer of your organization or of the canonical directory. \`pricing_model\` CPC or CPM with its \`rate\`. ${MONEY}`,
      },
    },
  )
  .get('/campaigns/:campaign_id', ({ apiKey, params }) => getCampaign(db, apiKey.organizationId, params.campaign_id), {
    auth: { role: 'readonly' },
    params: CampaignParams,
    response: { 200: Campaign, ...errorResponses },
    detail: { tags, summary: 'Get a campaign', description: "Another organization's campaign is 404." },
  })
  .patch(
    '/campaigns/:campaign_id',
    ({ apiKey, params, body }) =>
      transaction((tx) => updateCampaign(tx, apiKey.organizationId, params.campaign_id, body)),
    {
      auth: { role: 'editor' },
      params: CampaignParams,
      body: CampaignPatch,
      response: { 200: Campaign, ...errorResponses },
      detail: {
        tags,
        summary: 'Update a campaign or move its status',
        description:
          'Partial update; metadata merges; `null` clears a date. `status` moves draft → active, active ⇄ paused, active or paused → completed, completed → archived; any other move is 409 naming the allowed next states (also in `allowed_next_statuses`). The retailer can change only while the campaign is a draft; an archived campaign cannot change.',
      },
    },
  )
  .post(
    '/campaigns/:campaign_id/performance',
    ({ apiKey, params, body }) =>
      transaction((tx) => recordPerformance(tx, apiKey.organizationId, params.campaign_id, body)),
    {
      auth: { role: 'editor' },
      params: CampaignParams,
      body: PerformanceRows,
      response: { 200: PerformanceWritten, ...errorResponses },
      detail: {
        tags,
        summary: "Report a campaign's daily performance",
        description: `A JSON list of up to 1,000 daily rows: \`date\` (a UTC day), \`impressions\`, \`clicks\`, \`spend\` (decimal string) and \`source\` (default \`api\`). Idempotent by campaign, date and source: a row sent again replaces that day's figures (\`updated\`) or changes nothing (\`unchanged\`). All rows are written or none; the same date and source twice is 422, and so is a date outside the years 0001-9999 or a row that would take the campaign's lifetime totals past their bounds (spend 99999999999999.999999 USD, impressions and clicks 9007199254740991 each; a row counts by what it adds to the row it replaces). An archived campaign refuses rows (409). Answers the counts and the campaign's new lifetime totals. ${MONEY}`,
      },
    },
  )
  .post(
    '/performance/imports',
    async ({ apiKey, body, query, status }) => {
      if (!(body instanceof UploadBody))
        throw invalidField('body', 'must be a CSV or JSON lines file (text/csv, application/x-ndjson, gzip)')
      // streamed to a temporary file (never held, never walked), stored, then answered: the job reads it
      const limit = { organizationId: apiKey.organizationId, limit: UPLOAD_LIMIT, limitName: 'the limit of imports' }
      const created = await withUpload(body, limit, (file) =>
        transaction((tx) =>
          createImport(tx, apiKey.organizationId, {
            file,
            fileName: query.file_name,
            format: query.format,
            source: query.source,
          }),
        ),
      )
      return status(202, created)
    },
    {
      auth: { role: 'editor' },
      body: Upload(
        ['text/csv', 'application/x-ndjson', 'application/jsonl', 'application/gzip', 'application/octet-stream'],
        'a CSV or JSON lines file, or either format gzip-compressed (up to 20 MiB)',
      ),
      query: ImportQuery,
      response: { 202: PerformanceImport, ...errorResponses },
      detail: {
        tags,
        summary: 'Import performance rows from a file',
        description:
          'CSV with the header `campaign_id,date,impressions,clicks,spend[,source]`, or JSON lines with those keys (`spend` a string), optionally gzip-compressed, up to 20 MiB. A pg-boss job writes the rows in chunks (poll the import for progress); rows are idempotent by campaign, date and source, so importing a file again changes nothing. A row of an unknown, foreign or archived campaign, or with a bad value, is refused and listed in `errors` with its row number; when a file repeats a campaign, date and source, the last row wins. `source` names the source of rows that give none (default `import`). A CSV missing a column is 422 at once.',
      },
    },
  )
  .get(
    '/performance/imports/:import_id',
    ({ apiKey, params }) => getImport(db, apiKey.organizationId, params.import_id),
    {
      auth: { role: 'readonly' },
      params: ImportParams,
      response: { 200: PerformanceImport, ...errorResponses },
      detail: {
        tags,
        summary: 'Get a performance import',
        description:
          "Status (queued, running, succeeded, failed with `error`), `progress` in percent, counts (created, updated, unchanged, rejected) and the first rejected rows. Another organization's import is 404.",
      },
    },
  )
  .get(
    '/reporting/campaigns/:campaign_id/summary',
    ({ apiKey, params }) => campaignSummaryResponse(apiKey.organizationId, params.campaign_id),
    {
      auth: { role: 'readonly' },
      params: CampaignParams,
      response: { 200: CampaignSummary, ...errorResponses },
      detail: {
        tags,
        summary: "Get a campaign's performance summary",
        description: `Lifetime totals of the campaign's performance rows: impressions, clicks, spend; ctr = clicks / impressions (6 decimals), effective_cpc = spend / clicks (4 decimals), effective_cpm = spend × 1000 / impressions (4 decimals), each computed exactly in PostgreSQL numeric and rounded half-even, trailing zeros dropped, and "0" when the divisor is zero. ${MONEY} Another organization's campaign is 404.`,
      },
    },
  )
  .get(
    '/reporting/organizations/:organization_id/campaigns',
    ({ params }) => campaignListResponse(params.organization_id),
    {
      auth: { role: 'readonly', org: 'organization_id' },
      params: OrganizationParams,
      response: { 200: CampaignList, ...errorResponses },
      detail: {
        tags,
        summary: "List an organization's campaigns with their performance",
        description:
          'Every campaign of the organization, oldest first, with lifetime impressions, clicks, spend and ctr (as in the summary). Not paginated.',
      },
    },
  )
