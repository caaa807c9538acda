import { t } from 'elysia'
import { Id, ShortId } from '../shared/ids'
import { MetadataIn, MetadataOut } from '../shared/metadata'
import { PageQuery } from '../shared/pagination'
import { Chars, Enum } from '../shared/schema-types'
import { API_KEY_ROLES, MEMBER_ROLES } from './roles'

const Email = Chars(320, {
  pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$',
  error: 'must be an email address of at most 320 characters',
})
const Gs1Prefix = t.String({ pattern: '^[0-9]{4,12}$', error: 'must be a GS1 company prefix of 4-12 digits' })
// Resources read back with the limits their fields are written with (the OpenAPI document shows both).
const Name = Chars(255)

export const ApiKeyRole = Enum(API_KEY_ROLES)
export const MemberRole = Enum(MEMBER_ROLES)

export const ApiKey = t.Object(
  {
    id: ShortId,
    name: Name,
    role: ApiKeyRole,
    created: t.String({ format: 'date-time' }),
    key: t.String({ description: 'the raw key at creation; afterwards the first 8 characters followed by "..."' }),
    metadata: MetadataOut,
    description: Chars(255),
  },
  { 'x-schema-name': 'ApiKey' },
)

export const ApiKeyCreate = t.Object(
  {
    name: Chars(255, { minLength: 1 }),
    description: t.Optional(Chars(255, { default: '' })),
    role: t.Optional(Enum(API_KEY_ROLES, { description: 'default readonly' })),
    metadata: t.Optional(MetadataIn),
  },
  { additionalProperties: false },
)

export const Organization = t.Object({
  id: ShortId,
  name: Name,
  created: t.String({ format: 'date-time' }),
  gs1_company_prefixes: t.Array(Gs1Prefix),
  metadata: MetadataOut,
})

export const OrganizationCreate = t.Object(
  {
    name: Chars(255, { minLength: 1 }),
    owner_email: Email,
    owner_name: t.Optional(Chars(255)),
    gs1_company_prefixes: t.Optional(t.Array(Gs1Prefix, { maxItems: 100 })),
    metadata: t.Optional(MetadataIn),
  },
  { additionalProperties: false },
)

export const OrganizationCreated = t.Object({ organization: Organization, api_key: ApiKey })

export const Member = t.Object(
  {
    id: ShortId,
    user_email: Email,
    user_name: Chars(255),
    user_metadata: MetadataOut,
    role: MemberRole,
    role_display: t.String({ description: 'Owner, Manager, Editor, Billing or Viewer' }),
    created: t.String({ format: 'date-time' }),
  },
  { 'x-schema-name': 'Member' },
)

export const MemberCreate = t.Object(
  {
    user_email: Email,
    user_name: t.Optional(Chars(255)),
    user_metadata: t.Optional(MetadataIn),
    role: MemberRole,
  },
  { additionalProperties: false },
)

export const MemberPatch = t.Object(
  {
    user_name: t.Optional(Chars(255)),
    user_metadata: t.Optional(MetadataIn),
    role: t.Optional(MemberRole),
  },
  { additionalProperties: false },
)

/** Every member role but owner: what a key may give, and what a previous owner becomes. */
const NonOwnerRole = Enum(MEMBER_ROLES.filter((r): r is Exclude<typeof r, 'owner'> => r !== 'owner'))

export const OwnershipTransfer = t.Object(
  {
    from_member_id: Id('from_member_id'),
    to_member_id: Id('to_member_id'),
    previous_owner_role: t.Optional(NonOwnerRole),
  },
  { additionalProperties: false },
)

export const OwnershipTransferred = t.Object({ owner: Member, previous_owner: Member })

export const MemberQuery = t.Composite([
  PageQuery,
  t.Object({
    role: t.Optional(MemberRole),
    q: t.Optional(Chars(255, { minLength: 1, description: 'case-insensitive substring of name or email' })),
  }),
])

export const OrgParams = t.Object({ organization_id: Id('organization_id') })
export const MembersParams = OrgParams
export const MemberParams = t.Object({ organization_id: Id('organization_id'), member_id: Id('member_id') })
export const KeyParams = t.Object({ organization_id: Id('organization_id'), key_id: Id('key_id') })
