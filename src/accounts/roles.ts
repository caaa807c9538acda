export const API_KEY_ROLES = ['manager', 'editor', 'readonly'] as const
export type ApiKeyRole = (typeof API_KEY_ROLES)[number]

const RANK: Record<ApiKeyRole, number> = { readonly: 0, editor: 1, manager: 2 }

/** Contract §4: readonly reads, editor also writes catalog data, manager also administers. */
export const roleAllows = (held: ApiKeyRole, needed: ApiKeyRole) => RANK[held] >= RANK[needed]

export const MEMBER_ROLES = ['owner', 'manager', 'editor', 'billing', 'viewer'] as const
export type MemberRole = (typeof MEMBER_ROLES)[number]
export const ROLE_DISPLAY: Record<MemberRole, string> = {
  owner: 'Owner',
  manager: 'Manager',
  editor: 'Editor',
  billing: 'Billing',
  viewer: 'Viewer',
}
