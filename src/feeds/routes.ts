import { Elysia, t } from 'elysia'
import type { Caller } from '../accounts/key-cache'
import { GtinParams } from '../catalog/schemas'
import { config } from '../config'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { Upload, UploadBody, withUpload } from '../http/upload'
import { invalidField } from '../shared/errors'
import { Page } from '../shared/pagination'
import { listOffers } from './offers'
import { feedPath } from './paths'
import { checkRetailer, checkRunOptions, checkRunQuota, createRun, getRun, listRuns } from './runs'
import { Offer, OfferQuery, Run, RunCreate, RunParams, RunQuery, RunUploadQuery } from './schemas'
import { uploadFormat } from './uploads'

const tags = ['Feeds']

/** Whose runs a reader sees: the admin token's are the platform's (null), a key's its organization's. */
const reader = (admin: boolean, caller: Caller | null) => (admin ? null : caller!.organizationId)

/** A feed file as the body, streamed by the route (up to FEED_UPLOAD_MAX_MB; gzip allowed). */
const FeedUpload = Upload(
  [
    'text/csv',
    'text/tab-separated-values',
    'application/x-ndjson',
    'application/jsonl',
    'application/gzip',
    'application/octet-stream',
  ],
  'the feed file itself (up to FEED_UPLOAD_MAX_MB, default 512 MiB; gzip allowed)',
)

export const feedRoutes = new Elysia({ name: 'feeds', prefix: '/feeds/api/v1/runs' })
  .use(auth)
  .post(
    '',
    async ({ admin, caller, body, query, status }) => {
      // the admin token runs it as the platform (the source's weight); a key as its organization's statement
      const organizationId = admin ? null : caller!.organizationId
      if (!(body instanceof UploadBody)) {
        const input = body as typeof RunCreate.static
        const path = await feedPath(input.path, input.source)
        return status(
          202,
          await transaction((tx) =>
            createRun(tx, organizationId, {
              source: input.source,
              format: input.format,
              path,
              retailerId: input.retailer_id,
              full: input.full,
              mapping: input.mapping,
            }),
          ),
        )
      }
      const source = query.source
      if (!source) throw invalidField('source', 'an upload names its source in the query (?source=off|usda|affiliate)')
      // everything that can be refused without the file is refused before a byte of it is read:
      // the options, the organization's quota of runs, the retailer
      checkRunOptions({ source, format: query.format, retailerId: query.retailer_id }, 'upload')
      if (organizationId) await checkRunQuota(db, organizationId)
      if (query.retailer_id) await checkRetailer(db, organizationId, query.retailer_id)
      // streamed to a temporary file (never held, never walked), stored, then answered: the job
      // reads it. A format that cannot be uploaded (the USDA CSV folder) is refused from its head.
      const limit = { limit: config.FEED_UPLOAD_MAX_MB * 1024 * 1024, limitName: 'FEED_UPLOAD_MAX_MB' }
      const checkHead = query.format ? undefined : (head: Buffer) => void uploadFormat(source, head)
      const run = await withUpload(
        body,
        { organizationId: organizationId ?? 'platform', ...limit, checkHead },
        (file) =>
          transaction((tx) =>
            createRun(tx, organizationId, {
              source,
              format: query.format,
              upload: { name: query.file_name ?? 'upload', file },
              retailerId: query.retailer_id,
              full: query.full === 'true',
            }),
          ),
      )
      return status(202, run)
    },
    {
      keyOrAdmin: { role: 'manager' },
      body: t.Union([RunCreate, FeedUpload]),
      query: RunUploadQuery,
      response: { 202: Run, ...errorResponses },
      detail: {
        tags,
        summary: 'Start a feed import',
        description:
          "Either JSON naming a server file (`path`, inside the feed folder FEED_DIR) or the file itself as the body (Content-Type text/csv, text/tab-separated-values, application/x-ndjson, application/gzip or application/octet-stream; up to FEED_UPLOAD_MAX_MB, default 512 MiB, else 413 with nothing stored) with `source` and the other options as query parameters. Sources: `off` (Open Food Facts JSONL dump or tab-separated CSV export), `usda` (FoodData Central Branded Foods: the CSV folder, server path only, or the JSON download), `affiliate` (a Google Merchant style CSV/TSV of the retailer `retailer_id`, which must be your organization's; `mapping` renames columns). Gzip is detected from the content. The run is a pg-boss job that cuts the file into chunks of FEED_CHUNK_ROWS rows, each its own job (written once, even when retried); poll the run for progress and counts. Who runs it decides its authority (`authority` on the run): with the X-Admin-Token header the platform runs it and its values become candidates of the source (weights: gtin1_authoritative 0.95 > usda_fdc 0.8 > open_food_facts 0.7 > affiliate_feed 0.6); with a manager key it is your organization's statement, whatever the source: its values are recorded as crowd_sourced candidates (0.4) with your organization as contributor, so one organization alone never changes a field (agreement with another organization or a platform source does), a run replaces only your organization's own earlier statement of a product, and it decides no field of a product another organization has claimed. The products are promoted at once; a brand owner's claimed value is never overwritten. A row whose content is unchanged since the same runner's last import of the source is skipped. An organization may have FEED_RUNS_PER_ORGANIZATION runs (default 4) queued or running: the next is 429 `rate_limited` with Retry-After and RateLimit-Limit/-Remaining/-Reset, answered before the body is read (the admin token's runs are not counted); query options that contradict each other, a format the source is not read in, and an unknown or foreign `retailer_id` are refused before the body is read too. The workers are shared fairly: one organization's files are read one at a time and its chunks take at most FEED_CHUNKS_PER_ORGANIZATION slots, and every run's early chunks are written before any run's later ones. Manager keys or the admin token.",
      },
    },
  )
  .get('', ({ admin, caller, query }) => listRuns(reader(admin, caller), { status: query.status }, query), {
    keyOrAdmin: { role: 'readonly' },
    query: RunQuery,
    response: { 200: Page(Run), ...errorResponses },
    detail: {
      tags,
      summary: 'List feed import runs',
      description:
        "Your organization's runs (any role), newest first; `status` filters. With the X-Admin-Token header instead of a key: the platform's runs (started with the admin token, the CLI or a schedule).",
    },
  })
  .get('/:run_id', ({ admin, caller, params }) => getRun(db, reader(admin, caller), params.run_id), {
    keyOrAdmin: { role: 'readonly' },
    params: RunParams,
    response: { 200: Run, ...errorResponses },
    detail: {
      tags,
      summary: 'Get a feed import run',
      description:
        "Status (queued, running, succeeded, failed with `error`), progress, counts (read, created, updated, unchanged, rejected), how codes were read, the first rejected rows with line numbers and reasons, and for full imports the products that disappeared. Any role of the organization reads its runs; another organization's run is 404. The admin token reads the platform's runs, not an organization's own.",
    },
  })

export const offerRoutes = new Elysia({ name: 'offers', prefix: '/products/api/v1/products' })
  .use(auth)
  .get(
    '/:gtin/offers',
    ({ apiKey, params, query }) =>
      listOffers(apiKey.organizationId, params.gtin, { retailer_id: query.retailer_id }, query),
    {
      auth: { role: 'readonly' },
      params: GtinParams,
      query: OfferQuery,
      response: { 200: Page(Offer), ...errorResponses },
      detail: {
        tags: ['Products'],
        summary: "List a product's offers",
        description:
          "Retailer offers from affiliate feeds, by retailer then item: price (the sale price while it applies) and regular price as decimal strings, currency, availability, link. Only offers of retailers the key's organization sees: canonical retailers' and its own (a private retailer of another organization is 404 and its offers are not listed). A change of price or availability emits `offer.updated` to the retailer's organization. 404 for an unknown GTIN.",
      },
    },
  )
