import { timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { authenticate } from '../accounts/api-keys'
import { type ApiKeyRole, roleAllows } from '../accounts/roles'
import { config } from '../config'
import { AppError } from '../shared/errors'
import { parseId } from '../shared/ids'

type OrgParam = 'organization_id'
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

/**
 * `auth: { role, org? }` on a route: 401 before anything else is looked at, then 403 when the
 * key's role is too low or the path's organization (`org` names the path parameter) is not the key's.
 */
export const auth = new Elysia({ name: 'auth' })
  .derive({ as: 'global' }, async ({ headers }) => ({ caller: await authenticate(headers['x-api-key']) }))
  .macro({
    auth: (need: AuthRequirement) => ({
      detail: { security: [{ ApiKey: [] }] },
      transform({ caller }) {
        if (!caller) throw unauthenticated()
      },
      resolve({ caller, params }) {
        if (!caller) throw unauthenticated()
        if (!roleAllows(caller.role, need.role))
          throw new AppError('forbidden', `this action needs a ${need.role} key; this key is ${caller.role}`)
        if (need.org) {
          const raw = (params as Record<string, string>)[need.org]
          if (!raw || parseId(raw) !== caller.organizationId)
            throw new AppError('forbidden', 'this key belongs to another organization')
        }
        return { apiKey: caller }
      },
    }),
  })
