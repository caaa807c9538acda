import { Elysia } from 'elysia'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { Binary, errorResponses } from '../http/openapi'
import { AppError, notFound } from '../shared/errors'
import { normalizeGtin } from './gtin'
import { recallNoticePage } from './recall-notice'
import { RecallBody } from './recall-schemas'
import { endRecall, recallProduct } from './recalls'
import { findProduct, toProductResource } from './resource'
import { GtinParams, Product } from './schemas'

const tags = ['Products']
const RECALL = '/products/api/v1/products/:gtin/recall/'
const WHO =
  "A manager key of the organization that owns the product (an editor key is 403 `forbidden`; a product another organization owns, or no one, is 403 `forbidden` as for PATCH; an unknown GTIN 404; while the product's claim is disputed or rejected, 409 `conflict`)."
// the notice is the owner's text in a page of ours: nothing may load, nothing may frame it
const NOTICE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

/** Recalls (issue 46; contract §2): the owner's recall of a product and the public notice page. */
export const recallRoutes = new Elysia({ name: 'recalls' })
  .use(auth)
  .post(
    RECALL,
    ({ apiKey, params, body }) => transaction((tx) => recallProduct(tx, apiKey.organizationId, params.gtin, body)),
    {
      auth: { role: 'manager' },
      params: GtinParams,
      body: RecallBody,
      response: { 200: Product, ...errorResponses },
      detail: {
        tags,
        summary: 'Recall a product',
        operationId: 'recallProduct',
        description: `Marks the product recalled: its resource shows \`recall\` {reason, recalled_at, url} and \`product.recalled\` is emitted with it, in the same transaction. From the next scan on, the resolver serves the recall ahead of every resolution rule: \`?linkType=gs1:recallStatus\` redirects (307) to \`url\`, or, when no url is given, to the service's own notice page \`/products/recall/{gtin}\`; the product's linkset lists it under gs1:recallStatus; and while the recall lasts it is the product's default link too (a plain scan lands on the notice). \`reason\` 1-1000 characters; \`recalled_at\` an RFC 3339 date-time when the recall was issued, default now, not in the future; \`url\` an absolute http(s) URL. Recalling a recalled product replaces its recall and emits \`product.recalled\` again. A wrong value is 422 with nothing stored. ${WHO}`,
      },
    },
  )
  .delete(RECALL, ({ apiKey, params }) => transaction((tx) => endRecall(tx, apiKey.organizationId, params.gtin)), {
    auth: { role: 'manager' },
    params: GtinParams,
    response: { 200: Product, ...errorResponses },
    detail: {
      tags,
      summary: 'End a recall',
      operationId: 'endRecall',
      description: `Ends the product's recall: \`recall\` becomes null, \`product.updated\` is emitted, and the resolver serves the product's rules again from the next scan. A product under no recall is returned unchanged, with no event. ${WHO}`,
    },
  })
  .get(
    '/products/recall/:gtin',
    async ({ params }) => {
      const found = await findProduct(db, normalizeGtin(params.gtin))
      if (!found) throw notFound('product')
      const product = toProductResource(found)
      const { recall } = product
      if (!recall) throw new AppError('not_found', `product ${product.gtin} is under no recall`)
      return new Response(recallNoticePage({ ...product, recall }), { headers: NOTICE_HEADERS })
    },
    {
      params: GtinParams,
      response: { 200: Binary(['text/html'], 'the recall notice page'), ...errorResponses },
      detail: {
        tags,
        summary: 'Recall notice page',
        operationId: 'getRecallNotice',
        security: [],
        description:
          "Public HTML page of a product's recall: name, brand, GTIN, date and reason (every value escaped; the page loads nothing). It is where the resolver sends gs1:recallStatus, and the default link, of a product recalled without a notice URL of its own. 404 when the product is under no recall.",
      },
    },
  )
