import { Elysia } from 'elysia'
import { db } from '../db/client'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { Page } from '../shared/pagination'
import { getShare, listShares, requestCalculation, updateShare } from './revenue-shares'
import {
  CalculateAccepted,
  CalculateBody,
  OrganizationParams,
  RevenueShare,
  ShareParams,
  SharePatch,
  ShareQuery,
} from './schemas'

const tags = ['Revenue shares']
const WHO =
  "A share is visible under the retailer's organization and under the platform organization (PLATFORM_ORGANIZATION_ID, which sees every share); anyone else gets 404. Keys act on their own organization's path; the X-Admin-Token header acts on any."

export const revenueShareRoutes = new Elysia({ name: 'revenue-shares', prefix: '/advertising/api/v1/revenue-share' })
  .use(auth)
  .post(
    '/calculate',
    async ({ body, status }) => status(202, await requestCalculation(db, body.period, body.platform_fee_rate)),
    {
      adminOnly: true,
      body: CalculateBody,
      response: { 202: CalculateAccepted, ...errorResponses },
      detail: {
        tags,
        summary: "Calculate a month's revenue shares",
        description:
          "Admin token only (404 otherwise). Queues the pg-boss job that computes, for every retailer whose campaigns reported performance in the calendar month `period` (UTC days), gross revenue = the spend, rounded half-even to cents; platform_fee = gross × platform_fee_rate (default PLATFORM_FEE_RATE), rounded half-even to cents; retailer_share = gross − platform_fee. Running it again does not duplicate: a CALCULATED share is updated when its figures changed, an APPROVED, PAID or DISPUTED one keeps them. New or changed shares emit `revenue_share.calculated` to the retailer's organization. Amounts are summed and stored in unbounded numeric, so no number of campaigns overflows a share. Each retailer is computed and written apart from the others: a retailer whose write fails gets no share and is listed, with the reason (a database error by its SQLSTATE), in the job's output and the log, and every other retailer gets its share; running the month again retries it. The same job runs on the 1st of every month at 02:00 UTC for the month that ended.",
      },
    },
  )
  .get('/:organization_id', ({ params, query }) => listShares(params.organization_id, query, query), {
    keyOrAdmin: { role: 'readonly', org: 'organization_id' },
    params: OrganizationParams,
    query: ShareQuery,
    response: { 200: Page(RevenueShare), ...errorResponses },
    detail: {
      tags,
      summary: 'List revenue shares',
      description: `Newest period first. Filters: \`status\`, \`period_start\` (the first day of a month), \`retailer_id\`. ${WHO}`,
    },
  })
  .get('/:organization_id/:share_id', ({ params }) => getShare(params.organization_id, params.share_id), {
    keyOrAdmin: { role: 'readonly', org: 'organization_id' },
    params: ShareParams,
    response: { 200: RevenueShare, ...errorResponses },
    detail: {
      tags,
      summary: 'Get a revenue share',
      description: `Amounts are USD decimal strings at cents; platform_fee + retailer_share = gross_revenue exactly. ${WHO}`,
    },
  })
  .patch(
    '/:organization_id/:share_id',
    ({ params, body, admin }) =>
      transaction((tx) => updateShare(tx, params.organization_id, params.share_id, body, admin)),
    {
      keyOrAdmin: { role: 'manager', org: 'organization_id' },
      params: ShareParams,
      body: SharePatch,
      response: { 200: RevenueShare, ...errorResponses },
      detail: {
        tags,
        summary: "Move a revenue share's status",
        description: `Moves: CALCULATED → APPROVED → PAID, and CALCULATED, APPROVED or PAID → DISPUTED; any other move is 409 naming the allowed ones, and the same status again changes nothing. Only the admin token (the platform, which pays) moves a share to APPROVED or PAID; a manager key of the retailer's organization may set DISPUTED and metadata (403 for APPROVED or PAID). The platform organization's keys read every share but change none but their own organization's (403). The move to PAID needs \`payment_transfer_id\` and sets \`paid_at\`; a paid share's transfer id cannot change. Metadata merges. ${WHO}`,
      },
    },
  )
