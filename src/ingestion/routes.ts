import { Elysia, t } from 'elysia'
import { GtinParams } from '../catalog/schemas'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { invalidField } from '../shared/errors'
import { Page } from '../shared/pagination'
import { listOffers } from './offers'
import { createRun, feedPath, getRun, listRuns } from './runs'
import { Offer, OfferQuery, Run, RunCreate, RunParams, RunQuery, RunUploadQuery, UploadBytes } from './schemas'

const tags = ['Feeds']

export const feedRoutes = new Elysia({ name: 'feeds', prefix: '/feeds/api/v1/runs' })
  .use(auth)
  .post(
    '',
    async ({ apiKey, body, query, request, status }) => {
      const organizationId = apiKey.organizationId
      if (typeof body === 'string' && !request.headers.get('content-type')?.startsWith('text/csv'))
        throw invalidField('body', 'must be a JSON object naming a server file, or a file upload')
      if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
        const input = body as typeof RunCreate.static
        const path = await feedPath(input.path)
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
      if (!query.source)
        throw invalidField('source', 'an upload names its source in the query (?source=off|usda|affiliate)')
      const content = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body as Uint8Array)
      if (content.length === 0) throw invalidField('body', 'the uploaded file is empty')
      return status(
        202,
        await transaction((tx) =>
          createRun(tx, organizationId, {
            source: query.source!,
            format: query.format,
            upload: { name: query.file_name ?? 'upload', content },
            retailerId: query.retailer_id,
            full: query.full === 'true',
          }),
        ),
      )
    },
    {
      auth: { role: 'manager' },
      body: t.Union([
        RunCreate,
        t.String({ description: 'a CSV feed file (up to 20 MiB)', 'x-media-types': ['text/csv'] }),
        UploadBytes,
      ]),
      query: RunUploadQuery,
      response: { 202: Run, ...errorResponses },
      detail: {
        tags,
        summary: 'Start a feed import',
        description:
          "Either JSON naming a server file (`path`, inside the feed folder FEED_DIR) or the file itself as the body (Content-Type text/csv, text/tab-separated-values, application/x-ndjson, application/gzip or application/octet-stream; up to 20 MiB) with `source` and the other options as query parameters. Sources: `off` (Open Food Facts JSONL dump or tab-separated CSV export), `usda` (FoodData Central Branded Foods: the CSV folder, server path only, or the JSON download), `affiliate` (a Google Merchant style CSV/TSV of the retailer `retailer_id`, which must be your organization's; `mapping` renames columns). Gzip is detected from the content. The run is a pg-boss job that cuts the file into chunks of FEED_CHUNK_ROWS rows, each its own job (written once, even when retried); poll the run for progress and counts. Values become candidates of the source (weights: gtin1_authoritative 0.95 > usda_fdc 0.8 > open_food_facts 0.7 > affiliate_feed 0.6 > crowd_sourced 0.4) and the products are promoted at once; a brand owner's claimed value is never overwritten. A row whose content is unchanged since the source's last import is skipped. Manager keys only.",
      },
    },
  )
  .get('', ({ apiKey, query }) => listRuns(apiKey.organizationId, { status: query.status }, query), {
    auth: { role: 'manager' },
    query: RunQuery,
    response: { 200: Page(Run), ...errorResponses },
    detail: {
      tags,
      summary: 'List feed import runs',
      description: "Your organization's runs, newest first; `status` filters.",
    },
  })
  .get('/:run_id', ({ apiKey, params }) => getRun(db, apiKey.organizationId, params.run_id), {
    auth: { role: 'manager' },
    params: RunParams,
    response: { 200: Run, ...errorResponses },
    detail: {
      tags,
      summary: 'Get a feed import run',
      description:
        "Status (queued, running, succeeded, failed with `error`), progress, counts (read, created, updated, unchanged, rejected), how codes were read, the first rejected rows with line numbers and reasons, and for full imports the products that disappeared. Another organization's run is 404.",
    },
  })

export const offerRoutes = new Elysia({ name: 'offers', prefix: '/products/api/v1/products' })
  .use(auth)
  .get('/:gtin/offers', ({ params, query }) => listOffers(params.gtin, { retailer_id: query.retailer_id }, query), {
    auth: { role: 'readonly' },
    params: GtinParams,
    query: OfferQuery,
    response: { 200: Page(Offer), ...errorResponses },
    detail: {
      tags: ['Products'],
      summary: "A product's offers",
      description:
        "Retailer offers from affiliate feeds, by retailer then item: price (the sale price while it applies) and regular price as decimal strings, currency, availability, link. A change of price or availability emits `offer.updated` to the retailer's organization. 404 for an unknown GTIN.",
    },
  })
