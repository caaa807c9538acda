import { Client } from 'typesense'
import { config } from '../../config'
import { COLLECTIONS } from './schema'

/** Typesense mode: TYPESENSE_URL (and its key) set. */
export const typesenseEnabled = () => Boolean(config.TYPESENSE_URL)

let client: Client | null = null

/** The official client, one per process, from TYPESENSE_URL and TYPESENSE_API_KEY. */
export function typesense(): Client {
  if (!config.TYPESENSE_URL) throw new Error('TYPESENSE_URL is not set')
  client ??= new Client({
    nodes: [{ url: config.TYPESENSE_URL }],
    apiKey: config.TYPESENSE_API_KEY!,
    connectionTimeoutSeconds: 5,
    numRetries: 2,
    logLevel: 'warn',
  })
  return client
}

const isNotFound = (err: unknown) => (err as { httpStatus?: number })?.httpStatus === 404

let ensured: Promise<string[]> | null = null

/**
 * Creates each declared collection that does not exist yet (fields are never altered here); checked
 * once per process, again only after a failure.
 */
export function ensureCollections(): Promise<string[]> {
  ensured ??= createMissing().catch((err) => {
    ensured = null
    throw err
  })
  return ensured
}

async function createMissing(): Promise<string[]> {
  const created: string[] = []
  for (const schema of Object.values(COLLECTIONS)) {
    try {
      await typesense().collections(schema.name).retrieve()
    } catch (err) {
      if (!isNotFound(err)) throw err
      await typesense()
        .collections()
        .create(schema as never)
      created.push(schema.name)
    }
  }
  return created
}
