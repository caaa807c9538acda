import type { Command } from 'commander'
import { exits, plural } from './command'
import { withDatabase } from './database'

type ReplayOptions = { organization: string; endpoint: string; since: string; json?: boolean }

export function eventsCommands(program: Command) {
  program
    .command('events')
    .description('domain events')
    .command('replay')
    .description(
      "queue again, to one webhook endpoint, every event of its organization and types since a time (the server's workers deliver them)",
    )
    .requiredOption('--organization <id>', 'the organization')
    .requiredOption('--endpoint <id>', 'the webhook endpoint')
    .requiredOption('--since <time>', 'ISO 8601 time, e.g. 2026-11-01T00:00:00Z')
    .option('--json', 'print {endpoint_id, since, queued} as JSON')
    .action(exits(replay))
}

/** `events replay`: `recoverEndpoint`, as `POST …/endpoints/{id}/recover/` does. */
async function replay(values: ReplayOptions): Promise<number> {
  const { parseId } = await import('../../src/shared/ids')
  const organizationId = parseId(values.organization)
  const endpointId = parseId(values.endpoint)
  const { recoverEndpoint, recoverySince } = await import('../../src/webhooks/deliveries')
  const { AppError } = await import('../../src/shared/errors')
  let since: Date
  try {
    since = recoverySince(values.since)
  } catch {
    console.error('--since must be an ISO 8601 date-time with a time zone, not in the future')
    return 2
  }
  if (!organizationId || !endpointId) {
    console.error('--organization and --endpoint must be ids (shortuuid or UUID)')
    return 2
  }
  return withDatabase(2, 'send', async ({ db }) => {
    try {
      const result = await recoverEndpoint(db, organizationId, endpointId, since)
      if (values.json) console.log(JSON.stringify(result))
      else
        console.log(`${plural(result.queued, 'event')} queued to endpoint ${result.endpoint_id} since ${result.since}`)
      return 0
    } catch (err) {
      if (!(err instanceof AppError)) throw err
      console.error(`events replay: ${err.message}`)
      return 1
    }
  })
}
