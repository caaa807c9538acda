import { and, desc, eq, inArray, isNull, lt, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { feedRecords, feedRunChunks, feedRuns, feedUploads, NIL_SCOPE, type RejectedRow, retailers } from '../db/schema'
import { type Executor, inTransaction, type Tx } from '../db/tx'
import { emit } from '../events/outbox'
import { rateLimitHeaders } from '../http/rate-limit'
import type { ReceivedUpload } from '../http/upload'
import { drainBulkMarksNow } from '../search'
import { AppError, invalidField, notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { type PageQuery, paginate } from '../shared/pagination'
import { DATA_SOURCE_OF, detectFormat, type FeedFormat, type FeedSource } from './adapters'
import type { ColumnMapping } from './adapters/affiliate'
import { importQueue } from './queues'
import { storeUpload, uploadFormat } from './uploads'

type RunRow = typeof feedRuns.$inferSelect
const SAMPLE = 20

export type RunInput = {
  source: FeedSource
  format?: FeedFormat
  /** a server path (CLI: any readable file; HTTP: inside FEED_DIR) */
  path?: string
  /** a file received by the API (streamed to a temporary file; stored with the run) */
  upload?: { name: string; file: ReceivedUpload }
  /** the name the run shows (default: the upload's name or the path) */
  file?: string
  /** the path is a download of this run's own: removed once the file is read */
  downloaded?: boolean
  retailerId?: string | null
  full?: boolean
  mapping?: ColumnMapping
  /** the platform runs it although `organizationId` sees it (a schedule naming an organization) */
  platform?: boolean
}

/** The formats each source is read in. */
const FORMATS_OF: Record<FeedSource, readonly FeedFormat[]> = {
  off: ['off_jsonl', 'off_csv'],
  usda: ['usda_json', 'usda_csv'],
  affiliate: ['merchant_csv'],
}

/**
 * Refuses options that contradict each other (422). Cheap and without the file: the API checks
 * them before it reads an upload's body, and createRun again.
 */
export function checkRunOptions(
  input: Pick<RunInput, 'source' | 'format' | 'retailerId' | 'mapping'>,
  kind: 'path' | 'upload',
) {
  if (input.source === 'affiliate' && !input.retailerId)
    throw invalidField('retailer_id', 'an affiliate feed needs the retailer whose offers it lists')
  if (input.source !== 'affiliate' && input.retailerId)
    throw invalidField('retailer_id', 'only affiliate feeds belong to a retailer')
  if (input.mapping && input.source !== 'affiliate')
    throw invalidField('mapping', 'only affiliate feeds take a mapping')
  if (input.format && !FORMATS_OF[input.source].includes(input.format))
    throw invalidField('format', `the ${input.source} source is read as ${FORMATS_OF[input.source].join(' or ')}`)
  if (input.format === 'usda_csv' && kind === 'upload')
    throw invalidField('format', 'the USDA CSV download is a folder of files: import it from a server path')
}

/** The retailer of an affiliate run: one of the run's organization (any, for the platform), else 404. */
export async function checkRetailer(ex: Executor, organizationId: string | null, retailerId: string) {
  const [retailer] = await ex
    .select({ organizationId: retailers.organizationId })
    .from(retailers)
    .where(eq(retailers.id, retailerId))
  if (!retailer || (organizationId !== null && retailer.organizationId !== organizationId)) throw notFound('retailer')
}

/** Seconds a refused run is told to wait: about a small run's time in the queue. */
const RUN_RETRY_SECONDS = 30

/**
 * At most FEED_RUNS_PER_ORGANIZATION runs of one organization queued or running (429 with
 * Retry-After and RateLimit-* past it), so one tenant cannot fill the feed queues with uploads.
 * The platform's runs are not counted. The API asks before it reads a body; createRun asks again
 * under the organization's lock, so concurrent requests cannot both take the last place.
 */
export async function checkRunQuota(ex: Executor, organizationId: string) {
  const [open] = await ex
    .select({ n: sql<number>`count(*)::int` })
    .from(feedRuns)
    .where(
      and(
        eq(feedRuns.organizationId, organizationId),
        eq(feedRuns.contributorId, organizationId),
        inArray(feedRuns.status, ['queued', 'running']),
      ),
    )
  const limit = config.FEED_RUNS_PER_ORGANIZATION
  if (open!.n >= limit)
    throw new AppError(
      'rate_limited',
      `your organization has ${limit} feed runs queued or running (FEED_RUNS_PER_ORGANIZATION); start the next when one has finished`,
      undefined,
      {
        'retry-after': String(RUN_RETRY_SECONDS),
        ...rateLimitHeaders({ limit, remaining: 0, resetSeconds: RUN_RETRY_SECONDS }),
      },
    )
}

/** The pg-boss group of a run's jobs: its runner, so the feed workers share out per organization. */
export const runnerGroup = (run: { contributorId: string | null }) => ({ id: run.contributorId ?? 'platform' })

/**
 * Records a run and queues its `feeds.import` job in one transaction. Who runs it decides its
 * authority: with an organization (its key), the run is that organization's statement; with none
 * (the admin token, the CLI), or `platform` (a schedule), the platform's, carrying the source's
 * weight. An affiliate run needs a retailer of the run's organization (any retailer without one).
 * An organization's run counts against FEED_RUNS_PER_ORGANIZATION (checkRunQuota).
 */
export async function createRun(ex: Executor, organizationId: string | null, input: RunInput) {
  const contributorId = input.platform ? null : organizationId
  checkRunOptions(input, input.upload ? 'upload' : 'path')
  if (!input.path && !input.upload) throw invalidField('path', 'name a server file or upload one')
  if (input.upload?.file.size === 0) throw invalidField('body', 'the uploaded file is empty')
  return inTransaction(ex, async (tx) => {
    if (contributorId) {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`feed-runs:${contributorId}`}))`)
      await checkRunQuota(tx, contributorId)
    }
    if (input.retailerId) await checkRetailer(tx, organizationId, input.retailerId)
    let format = input.format
    if (!format && input.path) format = await detectFormat(input.source, input.path)
    if (!format && input.upload) format = uploadFormat(input.source, input.upload.file.head)
    const [run] = await tx
      .insert(feedRuns)
      .values({
        organizationId,
        contributorId,
        source: input.source,
        format: format!,
        file: input.file ?? input.upload?.name ?? input.path!,
        path: input.upload ? null : input.path!,
        retailerId: input.retailerId ?? null,
        full: input.full ?? false,
        options: { ...(input.mapping && { mapping: input.mapping }), ...(input.downloaded && { downloaded: true }) },
      })
      .returning()
    if (input.upload) await storeUpload(tx, run!.id, input.upload.file)
    await importQueue.send(tx, { runId: run!.id }, { singletonKey: run!.id, group: runnerGroup(run!) })
    return runResource(run!, [])
  })
}

/**
 * Under which source and contributor a run's product values are recorded. The platform's run
 * (contributorId null: the admin token, the CLI, a schedule) speaks with its source's weight; an
 * affiliate feed's values stay its retailer's organization's, as one independent contributor. A
 * run started with an organization's key is that organization's statement, recorded as a crowd
 * contribution of it: one organization alone never promotes a value, it replaces only its own
 * earlier statement of a product (writeSourceRecords), and it decides nothing of a product
 * another organization has claimed (speaksFor).
 */
export function statementOf(
  run: Pick<typeof feedRuns.$inferSelect, 'source' | 'contributorId'>,
  retailerOrg: string | null,
) {
  return run.contributorId === null
    ? { source: DATA_SOURCE_OF[run.source], contributorId: retailerOrg }
    : { source: 'crowd_sourced' as const, contributorId: run.contributorId }
}

type ChunkFigures = Pick<
  typeof feedRunChunks.$inferSelect,
  'status' | 'read' | 'created' | 'updated' | 'unchanged' | 'rejected' | 'readings' | 'rejectedSample'
>

/** The run as the API shows it: its chunks' counts summed, the first rejected rows as its sample. */
export function runResource(run: RunRow, chunks: ChunkFigures[]) {
  const sum = (k: 'read' | 'created' | 'updated' | 'unchanged' | 'rejected') => chunks.reduce((n, c) => n + c[k], 0)
  const readings: Record<string, number> = {}
  for (const c of chunks) for (const [k, n] of Object.entries(c.readings)) readings[k] = (readings[k] ?? 0) + n
  const doneChunks = chunks.filter((c) => c.status === 'done')
  const done = doneChunks.length
  // rows: those read from the file so far, those written, and the file's whole count, known once
  // it is read and estimated before from the share of its bytes read (0 until a chunk is stored)
  const rowsRead = sum('read')
  const rowsWritten = doneChunks.reduce((n, c) => n + c.read, 0)
  const rowsTotal =
    run.chunksTotal !== null
      ? rowsRead
      : run.bytesTotal && run.bytesRead
        ? Math.max(rowsRead, Math.round(rowsRead * (run.bytesTotal / run.bytesRead)))
        : null
  const percent =
    run.status === 'succeeded' ? 100 : rowsTotal ? Math.min(99, Math.floor((rowsWritten / rowsTotal) * 100)) : 0
  return {
    id: toShortId(run.id),
    source: run.source,
    authority: run.contributorId === null ? ('platform' as const) : ('organization' as const),
    data_source: statementOf(run, null).source,
    format: run.format,
    file: run.file,
    retailer_id: run.retailerId ? toShortId(run.retailerId) : null,
    full: run.full,
    status: run.status,
    progress: {
      percent,
      rows_written: rowsWritten,
      rows_total: rowsTotal,
      rows_exact: run.chunksTotal !== null,
      chunks_total: run.chunksTotal,
      chunks_done: done,
      bytes_read: run.bytesRead,
      bytes_total: run.bytesTotal,
    },
    counts: {
      read: sum('read'),
      created: sum('created'),
      updated: sum('updated'),
      unchanged: sum('unchanged'),
      rejected: sum('rejected'),
    },
    code_readings: readings,
    rejected_sample: chunks.flatMap((c) => c.rejectedSample).slice(0, SAMPLE) as RejectedRow[],
    disappeared:
      run.disappearedCount === null ? null : { count: run.disappearedCount, sample: run.disappearedSample ?? [] },
    error: run.error,
    created: run.created.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  }
}
export type RunResource = ReturnType<typeof runResource>

const chunkFigures = {
  status: feedRunChunks.status,
  read: feedRunChunks.read,
  created: feedRunChunks.created,
  updated: feedRunChunks.updated,
  unchanged: feedRunChunks.unchanged,
  rejected: feedRunChunks.rejected,
  readings: feedRunChunks.readings,
  rejectedSample: feedRunChunks.rejectedSample,
}

const chunksOf = (ex: Executor, runId: string) =>
  ex.select(chunkFigures).from(feedRunChunks).where(eq(feedRunChunks.runId, runId)).orderBy(feedRunChunks.chunk)

/**
 * The runs a reader sees: an organization (any role of it) the runs it started or a schedule
 * shows it; the platform (organization null: the admin token, the CLI) the runs it started itself,
 * schedules' included, and no organization's own runs.
 */
const visibleTo = (organizationId: string | null) =>
  organizationId === null ? isNull(feedRuns.contributorId) : eq(feedRuns.organizationId, organizationId)

/** A run by id; one the reader does not see (visibleTo) is 404. */
export async function getRun(ex: Executor, organizationId: string | null, runId: string) {
  const [run] = await ex
    .select()
    .from(feedRuns)
    .where(and(eq(feedRuns.id, runId), visibleTo(organizationId)))
  if (!run) throw notFound('run')
  return runResource(run, await chunksOf(ex, runId))
}

/** The runs the reader sees (visibleTo), newest first. */
export function listRuns(organizationId: string | null, filter: { status?: RunRow['status'] }, page: PageQuery) {
  const where = and(visibleTo(organizationId), filter.status ? eq(feedRuns.status, filter.status) : undefined)
  return paginate(
    page,
    async (limit, offset) => {
      const runs = await db
        .select({ run: feedRuns, total_count: sql<number>`count(*) over ()` })
        .from(feedRuns)
        .where(where)
        .orderBy(desc(feedRuns.created), desc(feedRuns.id))
        .limit(limit)
        .offset(offset)
      const figures = await Promise.all(runs.map((r) => chunksOf(db, r.run.id)))
      return runs.map((r, i) => ({ ...r, figures: figures[i]! }))
    },
    async () => (await db.$count(feedRuns, where)) as number,
    (r) => runResource(r.run, r.figures),
  )
}

/**
 * Tells the organization that started a run how it ended: `feed_run.completed` or `feed_run.failed`
 * with the run as the API shows it (its counts), in the transaction that ends it. The platform's
 * runs (no organization) tell nobody.
 */
/** A run is over: its products' search documents are built now (marks.ts holds them while it runs), and it is announced. */
async function ended(tx: Tx, run: RunRow) {
  await drainBulkMarksNow(tx)
  await announceEnd(tx, run)
}

async function announceEnd(tx: Tx, run: RunRow) {
  if (run.organizationId === null || (run.status !== 'succeeded' && run.status !== 'failed')) return
  await emit(tx, {
    eventType: run.status === 'succeeded' ? 'feed_run.completed' : 'feed_run.failed',
    organizationId: run.organizationId,
    subjectId: run.id,
    data: runResource(run, await chunksOf(tx, run.id)),
  })
}

/**
 * Marks a run failed with a reason the caller can act on (earlier chunks' writes stand). A run
 * already over (succeeded, or failed with its first reason) is left as it is.
 */
export function failRun(ex: Executor, runId: string, reason: string) {
  return inTransaction(ex, async (tx) => {
    const [run] = await tx
      .update(feedRuns)
      .set({ status: 'failed', error: reason, finishedAt: new Date() })
      .where(and(eq(feedRuns.id, runId), inArray(feedRuns.status, ['queued', 'running'])))
      .returning()
    if (run) await ended(tx, run)
    return Boolean(run)
  })
}

/**
 * Succeeds the run once it is cut into chunks and every chunk is written (called by the splitter
 * and by each chunk, under the run's row lock, so exactly one of them sees it complete; `no key
 * update`, which the foreign keys' share locks of chunks being stored do not wait for). A full
 * import then records which of the source's products the previous full import by the same runner
 * (the same organization, or the platform) had and this one did not: counted and sampled, never deleted.
 */
export async function finishIfComplete(tx: Tx, runId: string) {
  const [run] = await tx.select().from(feedRuns).where(eq(feedRuns.id, runId)).for('no key update')
  if (run?.status !== 'running' || run.chunksTotal === null) return false
  const [done] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(feedRunChunks)
    .where(and(eq(feedRunChunks.runId, runId), eq(feedRunChunks.status, 'done')))
  if (done!.n < run.chunksTotal) return false
  let disappeared: { disappearedCount: number; disappearedSample: string[] } | object = {}
  if (run.full) {
    const [previous] = await tx
      .select({ id: feedRuns.id })
      .from(feedRuns)
      .where(
        and(
          eq(feedRuns.source, run.source),
          run.retailerId ? eq(feedRuns.retailerId, run.retailerId) : isNull(feedRuns.retailerId),
          run.contributorId ? eq(feedRuns.contributorId, run.contributorId) : isNull(feedRuns.contributorId),
          eq(feedRuns.full, true),
          eq(feedRuns.status, 'succeeded'),
          lt(feedRuns.created, run.created),
        ),
      )
      .orderBy(desc(feedRuns.created))
      .limit(1)
    const gone = previous
      ? and(
          eq(feedRecords.source, DATA_SOURCE_OF[run.source]),
          eq(feedRecords.scope, run.retailerId ?? NIL_SCOPE),
          eq(feedRecords.contributorId, run.contributorId ?? NIL_SCOPE),
          eq(feedRecords.fullRunId, previous.id),
        )
      : undefined
    const count = gone ? ((await tx.$count(feedRecords, gone)) as number) : 0
    const sample = gone
      ? (
          await tx
            .select({ gtin: feedRecords.gtin })
            .from(feedRecords)
            .where(gone)
            .orderBy(feedRecords.gtin)
            .limit(SAMPLE)
        ).map((r) => r.gtin)
      : []
    disappeared = { disappearedCount: count, disappearedSample: sample }
  }
  const [finished] = await tx
    .update(feedRuns)
    .set({ status: 'succeeded', finishedAt: new Date(), ...disappeared })
    .where(eq(feedRuns.id, runId))
    .returning()
  await tx.delete(feedUploads).where(eq(feedUploads.runId, runId))
  await ended(tx, finished!)
  return true
}
