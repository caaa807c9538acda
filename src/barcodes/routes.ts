import { Elysia, t } from 'elysia'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { CONTENT_TYPES, renderBarcode } from './barcodes'
import { BarcodeRequest, withDefaults } from './schemas'

const tags = ['Barcodes']
const fileContent = Object.fromEntries(
  Object.values(CONTENT_TYPES).map((type) => [
    type,
    {
      schema: {
        type: 'string',
        format: type === 'image/svg+xml' || type === 'application/postscript' ? undefined : 'binary',
      },
    },
  ]),
)

export const barcodeRoutes = new Elysia({ name: 'barcodes', prefix: '/products/api/v1/barcode' }).use(auth).post(
  '/',
  async ({ body }) => {
    const { gtin, ...options } = body
    const file = await renderBarcode(gtin, withDefaults(options))
    return new Response(file.bytes as BodyInit, {
      headers: { 'content-type': file.contentType, 'content-disposition': `inline; filename="${file.fileName}"` },
    })
  },
  {
    auth: { role: 'readonly' },
    body: BarcodeRequest,
    response: { 200: t.Any({ description: 'the image file' }), ...errorResponses },
    detail: {
      tags,
      summary: 'Generate a 1D barcode (spec #8)',
      description:
        'Exact physical size: bars are whole multiples of module_width, total width = modules × module_width + 2 × quiet_zone, bars module_height tall (EAN/UPC guard bars extend 5 modules into standard-size text). svg is in millimetres; png has an opaque white background at `dpi` (default 300); eps is EPS 3.0 with a point bounding box; pdf is one page of vector paths. Text is OCR-B. 422 when barcode_type cannot carry the input (with the reason) or a check digit or Application Identifier is wrong.',
      responses: { 200: { description: 'the barcode image', content: fileContent } } as never,
    },
  },
)
