import { timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { authenticate } from '../accounts/api-keys'
import type { Caller } from '../accounts/key-cache'
import { type ApiKeyRole, roleAllows } from '../accounts/roles'
import { config } from '../config'
import { AppError } from '../shared/errors'
import { parseId } from '../shared/ids'

type OrgParam = 'organization_id'

/**
 * What a route needs, one macro per mode (each types what the handler gets):
 * - `auth: { role, org? }`: a valid key of at least that role (401, then 403); `org` names the
 *   path parameter that must be the key's organization. The handler gets `apiKey`.
 * - `optionalAuth: true`: anonymous or keyed; a key that is sent must be valid (401). The handler
 *   reads `caller` (the key's caller, or null when anonymous).
 * - `keyOrAdmin: { role, org? }`: as `auth`, or the X-Admin-Token header instead of a key (the
 *   platform acting on any organization's path).
 * - `adminOnly: true`: the X-Admin-Token header; without it (or without ADMIN_TOKEN set) the route
 *   does not exist (404), decided before the body is read.
 * Every route also gets `caller` and `admin` (whether a valid admin token was sent).
 */
export type AuthRequirement = { role: ApiKeyRole; org?: OrgParam }

const unauthenticated = () => new AppError('unauthenticated', 'send a valid, unrevoked API key in the X-API-Key header')

/** Constant-time check of the X-Admin-Token header; false whenever ADMIN_TOKEN is unset. */
export function isAdmin(token: string | undefined): boolean {
  const expected = config.ADMIN_TOKEN
  if (!expected || !token) return false
  const a = Buffer.from(token)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The caller's key, if it may do what `need` says on this path (401, then 403). */
function checkKey(caller: Caller | null, need: AuthRequirement, params: unknown): Caller {
  if (!caller) throw unauthenticated()
  if (!roleAllows(caller.role, need.role))
    throw new AppError(
      'forbidden',
      `this action needs ${/^[aeiou]/.test(need.role) ? 'an' : 'a'} ${need.role} key; this key is ${caller.role}`,
    )
  if (need.org) {
    const raw = (params as Record<string, string>)[need.org]
    if (!raw || parseId(raw) !== caller.organizationId)
      throw new AppError('forbidden', 'this key belongs to another organization')
  }
  return caller
}

export const auth = new Elysia({ name: 'auth' })
  .derive({ as: 'global' }, async ({ headers }) => ({
    caller: await authenticate(headers['x-api-key']),
    admin: isAdmin(headers['x-admin-token']),
  }))
  .macro({
    auth: (need: AuthRequirement) => ({
      detail: { security: [{ ApiKey: [] }] },
      transform({ caller }) {
        if (!caller) throw unauthenticated()
      },
      resolve({ caller, params }) {
        return { apiKey: checkKey(caller, need, params) }
      },
    }),
    keyOrAdmin: (need: AuthRequirement) => ({
      detail: { security: [{ ApiKey: [] }, { AdminToken: [] }] },
      transform({ caller, admin }) {
        if (!caller && !admin) throw unauthenticated()
      },
      resolve({ caller, admin, params }) {
        if (!admin) checkKey(caller, need, params)
      },
    }),
    optionalAuth: (on: true) => ({
      detail: { security: [{}, { ApiKey: [] }] },
      transform({ caller, headers }) {
        if (on && headers['x-api-key'] !== undefined && !caller) throw unauthenticated()
      },
    }),
    adminOnly: (on: true) => ({
      detail: { security: [{ AdminToken: [] }] },
      transform({ admin }) {
        if (on && !admin) throw new AppError('not_found', 'no such route')
      },
    }),
  })
