import { registerPrefixes } from '../catalog/prefixes'
import { members, organizations } from '../db/schema'
import { type Executor, inTransaction } from '../db/tx'
import { toShortId } from '../shared/ids'
import { type Metadata, mergeMetadata } from '../shared/metadata'
import { createApiKey } from './api-keys'

type OrganizationRow = typeof organizations.$inferSelect

export const toOrganizationResource = (row: OrganizationRow) => ({
  id: toShortId(row.id),
  name: row.name,
  created: row.created.toISOString(),
  gs1_company_prefixes: row.gs1CompanyPrefixes,
  metadata: row.metadata,
})

export type OrganizationInput = {
  name: string
  owner_email: string
  owner_name?: string
  gs1_company_prefixes?: string[]
  metadata?: Metadata | null
}

/**
 * An organization, its owner as a member, and a first manager key: all or nothing. Its GS1 company
 * prefixes become its own: 409 `conflict` when another organization holds one of them or an
 * overlapping one (registerPrefixes), and claims others made under them become disputed.
 */
export function createOrganization(ex: Executor, input: OrganizationInput) {
  return inTransaction(ex, async (tx) => {
    const prefixes = [...new Set(input.gs1_company_prefixes ?? [])]
    const [org] = await tx
      .insert(organizations)
      .values({ name: input.name, gs1CompanyPrefixes: prefixes, metadata: mergeMetadata({}, input.metadata) })
      .returning()
    await registerPrefixes(tx, org!.id, prefixes)
    await tx.insert(members).values({
      organizationId: org!.id,
      userEmail: input.owner_email,
      userName: input.owner_name ?? '',
      role: 'owner',
    })
    const apiKey = await createApiKey(tx, org!.id, {
      name: 'Owner key',
      description: `first key of ${input.owner_email}`,
      role: 'manager',
    })
    return { organization: toOrganizationResource(org!), api_key: apiKey }
  })
}
