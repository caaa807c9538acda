import { parseArgs } from 'node:util'
import { Value } from '@sinclair/typebox/value'
import { OrganizationCreate } from '../../src/accounts/schemas'
import { fieldErrors } from '../../src/http/validation'

export const orgUsage = `usage: cli org create --name NAME --owner-email EMAIL [--owner-name NAME] [--gs1-prefix DIGITS]... [--json]`

/** `org create`: the first organization, its owner and a manager key (contract §1.1). */
export async function orgCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  if (sub !== 'create') {
    console.error(orgUsage)
    return 2
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-name': { type: 'string' },
      'gs1-prefix': { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  })
  const input = {
    name: values.name ?? '',
    owner_email: values['owner-email'] ?? '',
    ...(values['owner-name'] !== undefined ? { owner_name: values['owner-name'] } : {}),
    ...(values['gs1-prefix'] ? { gs1_company_prefixes: values['gs1-prefix'] } : {}),
  }
  if (!Value.Check(OrganizationCreate, input)) {
    for (const e of fieldErrors([...Value.Errors(OrganizationCreate, input)] as never))
      console.error(`${e.field}: ${e.message}`)
    console.error(orgUsage)
    return 2
  }
  const { config } = await import('../../src/config')
  const { openDatabase } = await import('../../src/runtime')
  const { createOrganization } = await import('../../src/accounts/organizations')
  const database = await openDatabase(config, 2)
  try {
    const { organization, api_key } = await createOrganization(database.db, input)
    if (values.json) {
      console.log(JSON.stringify({ organization_id: organization.id, api_key: api_key.key, role: api_key.role }))
    } else {
      console.log(`organization ${organization.name} (${organization.id})`)
      console.log(`owner        ${input.owner_email}`)
      console.log(`api key      ${api_key.key}   (role ${api_key.role}; shown only now, store it safely)`)
    }
    return 0
  } finally {
    await database.close()
  }
}
