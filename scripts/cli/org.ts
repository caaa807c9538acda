import { Value } from '@sinclair/typebox/value'
import type { Command } from 'commander'
import { OrganizationCreate } from '../../src/accounts/schemas'
import { fieldErrors } from '../../src/http/validation'
import { collect, exits } from './command'
import { withDatabase } from './database'

type OrgOptions = { name: string; ownerEmail: string; ownerName?: string; gs1Prefix?: string[]; json?: boolean }

export function orgCommands(program: Command) {
  program
    .command('org')
    .description('organizations')
    .command('create')
    .description('the first organization, its owner and a manager key (contract §1.1)')
    .requiredOption('--name <name>', 'organization name')
    .requiredOption('--owner-email <email>', "the owner's email")
    .option('--owner-name <name>', "the owner's name")
    .option('--gs1-prefix <digits>', 'a GS1 company prefix (repeatable)', collect)
    .option('--json', 'print one JSON line {organization_id, api_key, role}')
    .action(exits(createOrg))
}

/** `org create`: the first organization, its owner and a manager key (contract §1.1). */
async function createOrg(values: OrgOptions): Promise<number> {
  const input = {
    name: values.name,
    owner_email: values.ownerEmail,
    ...(values.ownerName !== undefined ? { owner_name: values.ownerName } : {}),
    ...(values.gs1Prefix ? { gs1_company_prefixes: values.gs1Prefix } : {}),
  }
  if (!Value.Check(OrganizationCreate, input)) {
    for (const e of fieldErrors([...Value.Errors(OrganizationCreate, input)] as never))
      console.error(`${e.field}: ${e.message}`)
    return 2
  }
  const { createOrganization } = await import('../../src/accounts/organizations')
  return withDatabase(2, 'none', async ({ db }) => {
    const { organization, api_key } = await createOrganization(db, input)
    if (values.json) {
      console.log(JSON.stringify({ organization_id: organization.id, api_key: api_key.key, role: api_key.role }))
    } else {
      console.log(`organization ${organization.name} (${organization.id})`)
      console.log(`owner        ${input.owner_email}`)
      console.log(`api key      ${api_key.key}   (role ${api_key.role}; shown only now, store it safely)`)
    }
    return 0
  })
}
