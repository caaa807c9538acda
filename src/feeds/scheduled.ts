import { extname, join, resolve } from 'node:path'
import { eq } from 'drizzle-orm'
import { db } from '../db/client'
import { feedRuns, organizations, retailers } from '../db/schema'
import { AppError } from '../shared/errors'
import { parseId, toShortId } from '../shared/ids'
import { logger } from '../shared/logger'
import type { FeedFormat, FeedSource } from './adapters'
import { DownloadFailed, downloadFeed } from './download'
import { feedDir } from './paths'
import { createRun } from './runs'
import type { ScheduledImport } from './schedules'

const exists = async (table: typeof organizations | typeof retailers, id: string | null) =>
  id !== null && ((await db.$count(table, eq(table.id, id))) as number) > 0

/** The format recorded on a run that failed before its file could be looked at. */
const DEFAULT_FORMAT: Record<FeedSource, FeedFormat> = {
  off: 'off_jsonl',
  usda: 'usda_json',
  affiliate: 'merchant_csv',
}

/**
 * One firing of a scheduled import: downloads the URL (into FEED_DIR/downloads) or takes the path
 * (absolute, or relative to FEED_DIR), then records a run exactly as the API and CLI do, as the
 * platform's (the entry's organization, if any, sees it). Every
 * firing leaves a run: one that cannot start (a refused or failing download, a missing file, an
 * unknown retailer or organization) is recorded as failed with the reason, so it shows in `GET …/runs`.
 */
export async function startScheduledImport(entry: ScheduledImport, now = new Date()): Promise<string> {
  const organizationId = entry.organization_id ? parseId(entry.organization_id) : null
  const file = entry.url ?? entry.path!
  // a schedule is the operator's: the platform runs it (its source's weight); the organization only sees it
  const input = {
    platform: true,
    source: entry.source,
    format: entry.format,
    retailerId: entry.retailer_id ? parseId(entry.retailer_id) : null,
    full: entry.full,
    mapping: entry.mapping,
    file,
  }
  const organizationKnown = await exists(organizations, organizationId)
  try {
    if (organizationId && !organizationKnown)
      throw new AppError('not_found', 'organization not found (organization_id of the schedule entry)')
    if (entry.path) return (await createRun(db, organizationId, { ...input, path: resolve(feedDir(), entry.path) })).id
    const stamp = now.toISOString().replace(/[-:.]/g, '')
    const name = new URL(entry.url!).pathname.split('/').pop() ?? ''
    const dest = join(feedDir(), 'downloads', `${entry.name}-${stamp}${extname(name).slice(0, 8)}`)
    await downloadFeed(entry.url!, dest)
    return (await createRun(db, organizationId, { ...input, path: dest, downloaded: true })).id
  } catch (err) {
    const fileError = /^E[A-Z]+$/.test(String((err as NodeJS.ErrnoException).code)) // ENOENT, EACCES, …
    if (!(err instanceof DownloadFailed || err instanceof AppError || fileError)) throw err
    const reason =
      err instanceof DownloadFailed
        ? `the download failed: ${err.message}`
        : err instanceof AppError
          ? err.message
          : `the file cannot be read: ${(err as Error).message}`
    logger.warn({ schedule: entry.name, reason }, 'scheduled import could not start')
    // the failed run names only an organization and a retailer that exist
    const [run] = await db
      .insert(feedRuns)
      .values({
        organizationId: organizationKnown ? organizationId : null,
        source: entry.source,
        format: entry.format ?? DEFAULT_FORMAT[entry.source],
        file,
        path: entry.path ?? null,
        retailerId: (await exists(retailers, input.retailerId)) ? input.retailerId : null,
        full: entry.full ?? false,
        status: 'failed',
        error: reason,
        finishedAt: new Date(),
      })
      .returning({ id: feedRuns.id })
    return toShortId(run!.id)
  }
}
