import { Elysia, t } from 'elysia'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { notFound } from '../shared/errors'
import { Page, PageQuery } from '../shared/pagination'
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys'
import { addMember, listMembers, removeMember, transferOwnership, updateMember } from './members'
import { createOrganization } from './organizations'
import {
  ApiKey,
  ApiKeyCreate,
  KeyParams,
  Member,
  MemberCreate,
  MemberParams,
  MemberPatch,
  MemberQuery,
  MembersParams,
  OrganizationCreate,
  OrganizationCreated,
  OrgParams,
  OwnershipTransfer,
  OwnershipTransferred,
} from './schemas'

const tags = ['Account']

export const accountRoutes = new Elysia({ name: 'accounts', prefix: '/account/api/v1/organizations' })
  .use(auth)
  .post('', async ({ body, status }) => status(201, await transaction((tx) => createOrganization(tx, body))), {
    adminOnly: true,
    body: OrganizationCreate,
    response: { 201: OrganizationCreated, ...errorResponses },
    detail: {
      tags,
      summary: 'Create an organization (operator)',
      description:
        'Only when the server has ADMIN_TOKEN set, with that token in X-Admin-Token; otherwise 404. Creates the organization, its owner member and a first manager key, whose raw value is shown once.',
    },
  })
  .post(
    '/:organization_id/api-keys',
    ({ body, apiKey }) => transaction((tx) => createApiKey(tx, apiKey.organizationId, body)),
    {
      auth: { role: 'manager', org: 'organization_id' },
      params: OrgParams,
      body: ApiKeyCreate,
      response: { 200: ApiKey, ...errorResponses },
      detail: {
        tags,
        summary: 'Create an API key',
        description: 'The raw `key` appears in this response only; it is stored as a hash. Role defaults to readonly.',
      },
    },
  )
  .get('/:organization_id/api-keys', ({ apiKey, query }) => listApiKeys(apiKey.organizationId, query), {
    auth: { role: 'manager', org: 'organization_id' },
    params: OrgParams,
    query: PageQuery,
    response: { 200: Page(ApiKey), ...errorResponses },
    detail: {
      tags,
      summary: 'List API keys',
      description: 'Live keys, oldest first; `key` is masked to its first 8 characters followed by "...".',
    },
  })
  .delete(
    '/:organization_id/api-keys/:key_id',
    async ({ apiKey, params, status }) => {
      if (!(await transaction((tx) => revokeApiKey(tx, apiKey.organizationId, params.key_id))))
        throw notFound('API key')
      return status(204, undefined)
    },
    {
      auth: { role: 'manager', org: 'organization_id' },
      params: KeyParams,
      response: { 204: t.Void(), ...errorResponses },
      detail: {
        tags,
        summary: 'Revoke an API key',
        description: 'The key stops working on the next request, in every server process.',
      },
    },
  )
  .get('/:organization_id/members', ({ apiKey, query }) => listMembers(apiKey.organizationId, query, query), {
    auth: { role: 'readonly', org: 'organization_id' },
    params: MembersParams,
    query: MemberQuery,
    response: { 200: Page(Member), ...errorResponses },
    detail: {
      tags,
      summary: 'List organization members',
      description: 'Oldest first. `q` matches a case-insensitive substring of name or email.',
    },
  })
  .post(
    '/:organization_id/members',
    ({ apiKey, body, status }) =>
      transaction((tx) => addMember(tx, apiKey.organizationId, body)).then((m) => status(201, m)),
    {
      auth: { role: 'manager', org: 'organization_id' },
      params: MembersParams,
      body: MemberCreate,
      response: { 201: Member, ...errorResponses },
      detail: {
        tags,
        summary: 'Add a member',
        description:
          "409 `conflict` when the email is already a member. Role `owner` is refused (403): ownership passes only at the owner's own request (`POST …/ownership`).",
      },
    },
  )
  .patch(
    '/:organization_id/members/:member_id',
    ({ apiKey, params, body }) => transaction((tx) => updateMember(tx, apiKey.organizationId, params.member_id, body)),
    {
      auth: { role: 'manager', org: 'organization_id' },
      params: MemberParams,
      body: MemberPatch,
      response: { 200: Member, ...errorResponses },
      detail: {
        tags,
        summary: "Change a member's role, name or metadata",
        description:
          "No key changes the organization's owner member or makes a member `owner` (403 `forbidden`): ownership passes only at the owner's own request (`POST …/ownership`).",
      },
    },
  )
  .delete(
    '/:organization_id/members/:member_id',
    async ({ apiKey, params, status }) => {
      await transaction((tx) => removeMember(tx, apiKey.organizationId, params.member_id))
      return status(204, undefined)
    },
    {
      auth: { role: 'manager', org: 'organization_id' },
      params: MemberParams,
      response: { 204: t.Void(), ...errorResponses },
      detail: {
        tags,
        summary: 'Remove a member',
        description:
          "No key removes the organization's owner member (403 `forbidden`); hand ownership on first (`POST …/ownership`).",
      },
    },
  )
  .post(
    '/:organization_id/ownership',
    ({ params, body }) => transaction((tx) => transferOwnership(tx, params.organization_id, body)),
    {
      adminOnly: true,
      params: OrgParams,
      body: OwnershipTransfer,
      response: { 200: OwnershipTransferred, ...errorResponses },
      detail: {
        tags,
        summary: "Transfer ownership (operator, at the owner's request)",
        description:
          "Keys are not people, so no key can hand an organization's ownership on. The owner asks the platform, which checks that the request is the owner's own and calls this with X-Admin-Token (404 without it): `to_member_id` becomes the owner and the owner `from_member_id` takes `previous_owner_role` (default manager), in one transaction. 409 `conflict` when `from_member_id` is not an owner; 404 when either member is not of the organization.",
      },
    },
  )
