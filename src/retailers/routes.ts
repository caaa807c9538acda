import { Elysia } from 'elysia'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { Page } from '../shared/pagination'
import { createRetailer, getRetailer, listRetailers, updateRetailer } from './retailers'
import { Retailer, RetailerCreate, RetailerParams, RetailerPatch, RetailerQuery } from './schemas'

const tags = ['Retailers']
const visibility = 'A key sees the retailers of its own organization and the canonical (shared) retailer directory.'

export const retailerRoutes = new Elysia({ name: 'retailers', prefix: '/retailers/api/v1/retailers' })
  .use(auth)
  .get(
    '',
    ({ apiKey, query }) =>
      listRetailers(apiKey.organizationId, { search: query.search, organization_id: query.organization_id }, query),
    {
      auth: { role: 'readonly' },
      query: RetailerQuery,
      response: { 200: Page(Retailer), ...errorResponses },
      detail: {
        tags,
        summary: 'List retailers',
        description: `${visibility} Ordered by name. \`search\` is a case-insensitive substring of the name; \`organization_id\` narrows to that organization's visible retailers.`,
      },
    },
  )
  .post(
    '',
    async ({ apiKey, admin, body, status }) =>
      status(201, await transaction((tx) => createRetailer(tx, apiKey.organizationId, body, admin))),
    {
      auth: { role: 'editor' },
      body: RetailerCreate,
      response: { 201: Retailer, ...errorResponses },
      detail: {
        tags,
        summary: 'Create a retailer',
        description:
          "Owned by the key's organization. Emits `retailer.created`. `gln` must carry a valid GS1 check digit.",
      },
    },
  )
  .get('/:id', ({ apiKey, params }) => getRetailer(apiKey.organizationId, params.id), {
    auth: { role: 'readonly' },
    params: RetailerParams,
    response: { 200: Retailer, ...errorResponses },
    detail: { tags, summary: 'Get a retailer', description: `${visibility} Others are 404.` },
  })
  .patch(
    '/:id',
    ({ apiKey, admin, params, body }) =>
      transaction((tx) => updateRetailer(tx, apiKey.organizationId, params.id, body, admin)),
    {
      auth: { role: 'editor' },
      params: RetailerParams,
      body: RetailerPatch,
      response: { 200: Retailer, ...errorResponses },
      detail: {
        tags,
        summary: 'Update a retailer',
        description:
          'Partial update of a retailer the organization owns. A canonical retailer of another organization, which the caller can read, is 403 `forbidden`; any other retailer of another organization is 404. Metadata merges. Emits `retailer.updated`.',
      },
    },
  )
