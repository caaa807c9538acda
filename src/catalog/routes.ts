import { Elysia, t } from 'elysia'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { notFound } from '../shared/errors'
import { Page } from '../shared/pagination'
import { claimProduct, unclaimProduct } from './claims'
import { normalizeGtin } from './gtin'
import { createProduct, getProduct, listProducts, updateProduct } from './products'
import { contribute } from './promotion'
import { provenanceOf } from './provenance'
import { findProduct } from './resource'
import {
  Contribution,
  ContributionAccepted,
  GtinParams,
  Product,
  ProductCreate,
  ProductPatch,
  ProductQuery,
  Provenance,
  UnclaimBody,
} from './schemas'

const tags = ['Products']
const gtinNote =
  'The path GTIN may have 8, 12, 13 or 14 digits, with or without separators; it is normalized to GTIN-14.'

export const catalogRoutes = new Elysia({ name: 'catalog', prefix: '/products/api/v1/products' })
  .use(auth)
  .post(
    '',
    async ({ apiKey, body, status }) =>
      status(201, await transaction((tx) => createProduct(tx, apiKey.organizationId, body))),
    {
      auth: { role: 'editor' },
      body: ProductCreate,
      response: { 201: Product, ...errorResponses },
      detail: {
        tags,
        summary: 'Create a product',
        description:
          "Creates the record and claims the GTIN for the key's organization (`data_source` claimed). 409 `gtin_exists` when the GTIN is already in the catalog (claim it instead); 409 `conflict` when the GTIN lies under a GS1 company prefix registered to another organization. 422 `invalid_gtin` for a bad GTIN (length, check digit, restricted-circulation or coupon range) and `date_label_violation` for prohibited date-label wording (California AB 660) in product_name, description, net_content or usage_instructions. Emits `product.created`.",
      },
    },
  )
  .get('', ({ query }) => listProducts({ claimed: query.claimed, organization_id: query.organization_id }, query), {
    auth: { role: 'readonly' },
    query: ProductQuery,
    response: { 200: Page(Product), ...errorResponses },
    detail: {
      tags,
      summary: 'List products',
      description:
        'The catalog, by GTIN. `organization_id` keeps products owned by that organization; `claimed` keeps claimed (true) or unclaimed (false) ones.',
    },
  })
  .get('/:gtin', ({ params }) => getProduct(params.gtin), {
    auth: { role: 'readonly' },
    params: GtinParams,
    response: { 200: Product, ...errorResponses },
    detail: { tags, summary: 'Get a product', description: `Any key can read the catalog. ${gtinNote}` },
  })
  .patch(
    '/:gtin',
    ({ apiKey, params, body }) => transaction((tx) => updateProduct(tx, apiKey.organizationId, params.gtin, body)),
    {
      auth: { role: 'editor' },
      params: GtinParams,
      body: ProductPatch,
      response: { 200: Product, ...errorResponses },
      detail: {
        tags,
        summary: 'Update a product',
        description: `Partial update by the owning organization (403 otherwise; 409 \`conflict\` while its claim is disputed or rejected). Metadata merges; date labels are checked and ingredients parsed again. Emits \`product.updated\`. ${gtinNote}`,
      },
    },
  )
  .delete(
    '/:gtin',
    ({ apiKey, params, body }) =>
      transaction((tx) => unclaimProduct(tx, apiKey.organizationId, params.gtin, body?.organization_id)),
    {
      auth: { role: 'editor' },
      params: GtinParams,
      body: UnclaimBody,
      response: { 200: Product, ...errorResponses },
      detail: {
        tags,
        summary: 'Unclaim a product',
        description: `The product stays in the catalog with \`is_claimed\` false and \`owner_id\`, \`claim_verification_status\` null. Only the owning organization can unclaim (403). Optional body \`organization_id\` must be the key's. Emits \`product.unclaimed\`. ${gtinNote}`,
      },
    },
  )
  .post(
    '/:gtin/claim',
    ({ apiKey, params }) => transaction((tx) => claimProduct(tx, apiKey.organizationId, params.gtin)),
    {
      auth: { role: 'editor' },
      params: GtinParams,
      body: t.Optional(
        t.Object({}, { additionalProperties: false, description: 'no fields; an empty object or no body' }),
      ),
      response: { 200: Product, ...errorResponses },
      detail: {
        tags,
        summary: 'Claim a product',
        description: `Links the product to a brand of the key's organization; \`claim_verification_status\` is prefix_matched when the GTIN is under one of its GS1 company prefixes, else unverified. Claiming again is idempotent; a GTIN held by another organization is 409 \`already_claimed\`, and one under a GS1 company prefix registered to another organization is 409 \`conflict\`. The holder of the GTIN's company prefix takes over a claim another organization made without it (such a claim is \`disputed\` from the moment the prefix is registered, and the resolver withholds its links): \`product.unclaimed\` goes to that organization. Emits \`product.claimed\`. ${gtinNote}`,
      },
    },
  )
  .post(
    '/:gtin/contributions',
    async ({ apiKey, params, body, status }) =>
      status(202, await transaction((tx) => contribute(tx, apiKey.organizationId, params.gtin, body.fields))),
    {
      auth: { role: 'editor' },
      params: GtinParams,
      body: Contribution,
      response: { 202: ContributionAccepted, ...errorResponses },
      detail: {
        tags,
        summary: 'Contribute field values (crowd)',
        description:
          'Stored as crowd_sourced candidates (confidence 0.4 each, one per contributing organization) and folded into the record by the `catalog.promote` job only once they pass the promotion threshold (PROMOTION_THRESHOLD, default 0.6): one contribution alone does not change a field, two independent agreeing ones do. Values from the brand owner always win.',
      },
    },
  )
  .get(
    '/:gtin/provenance',
    async ({ params }) => {
      const gtin = normalizeGtin(params.gtin)
      const found = await findProduct(db, gtin)
      if (!found) throw notFound('product')
      return provenanceOf(db, found.product.id, gtin)
    },
    {
      auth: { role: 'readonly' },
      params: GtinParams,
      response: { 200: Provenance, ...errorResponses },
      detail: {
        tags,
        summary: "Get a product's field provenance",
        description:
          'Every candidate value per field, newest first, with source, confidence and contributor; `canonical` marks the one the record shows.',
      },
    },
  )
