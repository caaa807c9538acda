import { Elysia, t } from 'elysia'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { Binary, errorResponses, Problem } from '../http/openapi'
import { Upload, UploadBody } from '../http/upload'
import { CONTENT_TYPES } from './barcodes'
import { readBatchCsv } from './batch-csv'
import { BATCH_JSON_LIMIT, Batch, BatchCsvQuery, BatchParams, BatchRequest, DEFAULT_OUTPUT } from './batch-schemas'
import { batchDownload, createBatch, getBatch } from './batches'
import { renderOffThread } from './render-pool'
import { BarcodeRequest, withDefaults } from './schemas'

const tags = ['Barcodes']
export const barcodeRoutes = new Elysia({ name: 'barcodes', prefix: '/products/api/v1/barcode' })
  .use(auth)
  .post(
    '/',
    async ({ body }) => {
      const { gtin, ...options } = body
      const file = await renderOffThread(gtin, withDefaults(options))
      return new Response(file.bytes as ConstructorParameters<typeof Response>[0], {
        headers: { 'content-type': file.contentType, 'content-disposition': `inline; filename="${file.fileName}"` },
      })
    },
    {
      auth: { role: 'readonly' },
      body: BarcodeRequest,
      response: {
        200: Binary(Object.values(CONTENT_TYPES), 'the barcode image, in the requested format'),
        ...errorResponses,
      },
      detail: {
        tags,
        summary: 'Generate a 1D barcode',
        description:
          'Exact physical size: bars are whole multiples of module_width, total width = modules × module_width + 2 × quiet_zone, bars module_height tall (EAN/UPC guard bars extend 5 modules into standard-size text). svg is in millimetres; png has an opaque white background at `dpi` (default 300); eps is EPS 3.0 with a point bounding box; pdf is one page of vector paths. Text is OCR-B. 422 when barcode_type cannot carry the input (with the reason) or a check digit or Application Identifier is wrong, and when a PNG would exceed 24 million pixels (the message gives its size). Rendered on a worker thread; 503 with Retry-After when the renderer is saturated.',
      },
    },
  )
  .post(
    '/batch/',
    async ({ apiKey, body, query, status }) => {
      if (body instanceof UploadBody) {
        const { output = DEFAULT_OUTPUT, template, ...options } = query
        // read as it streams in, bounded in bytes and rows (never walked by the framework)
        const items = await readBatchCsv(body, apiKey.organizationId)
        return status(
          202,
          await transaction((tx) =>
            createBatch(tx, apiKey.organizationId, items, withDefaults(options), output, template),
          ),
        )
      }
      const { items, output, template, ...options } = body as typeof BatchRequest.static
      return status(
        202,
        await transaction((tx) =>
          createBatch(tx, apiKey.organizationId, items, withDefaults(options), output, template),
        ),
      )
    },
    {
      auth: { role: 'readonly' },
      body: t.Union([BatchRequest, Upload(['text/csv'], 'a header row with gtin and optional label (up to 20 MiB)')]),
      query: BatchCsvQuery,
      response: { 202: Batch, ...errorResponses },
      detail: {
        tags,
        summary: 'Start a batch export',
        description: `Up to 10,000 items as JSON (\`items\`, options as for a single barcode, \`output\` sheet or zip (a CSV upload's \`output\` defaults to sheet), \`template\` a4-3x8 or letter-3x10; this route takes JSON bodies up to ${BATCH_JSON_LIMIT} bytes, enough for 10,000 items with the longest labels, where others take 1 MiB) or as a CSV upload (Content-Type text/csv, columns gtin and optional label, options as query parameters; up to 20 MiB). Runs as a pg-boss job: poll the batch for status, progress and per-row errors (invalid rows are skipped), then download. A sheet is a vector PDF of labels, each symbol centred and scaled into its label; the \`label\` of each item is printed above it as searchable, copyable text in an embedded DejaVu Sans subset (Latin with extensions, Greek, Cyrillic, Armenian, Georgian; a character the font cannot draw, such as CJK, Arabic or Hebrew, is shown as the mark U+FFFD and still copies as given). A label line too long for the label shrinks to 1.5 mm, then ends in an ellipsis. An organization may have 2 batches queued or running and start 20 per hour (429 with Retry-After). The output is kept 24 hours after success (\`expires_at\`).`,
      },
    },
  )
  .get('/batch/:id/', ({ apiKey, params }) => getBatch(apiKey.organizationId, params.id), {
    auth: { role: 'readonly' },
    params: BatchParams,
    response: { 200: Batch, ...errorResponses },
    detail: {
      tags,
      summary: 'Get a batch export',
      description:
        "`completed` of `total` rows processed so far, per-row `errors` (row from 1, input, reason), and `download_url` once succeeded. Another organization's batch is 404.",
    },
  })
  .get(
    '/batch/:id/download',
    async ({ apiKey, params }) => {
      const file = await batchDownload(apiKey.organizationId, params.id)
      return new Response(file.body, {
        headers: { 'content-type': file.contentType, 'content-disposition': `attachment; filename="${file.fileName}"` },
      })
    },
    {
      auth: { role: 'readonly' },
      params: BatchParams,
      response: {
        200: Binary(['application/pdf', 'application/zip'], 'the label sheet (PDF) or the zip of files'),
        ...errorResponses,
        410: Problem,
      },
      detail: {
        tags,
        summary: 'Download a batch export',
        description:
          "Streams the PDF (sheet) or zip, from the database (BATCH_STORE=postgres, the default: any api process serves any batch) or from the rendering host's BATCH_DIR (BATCH_STORE=directory). 409 `conflict` until the batch has succeeded; 410 `gone` once its output has expired (`expires_at`, BATCH_RETENTION_HOURS after success, default 24).",
      },
    },
  )
