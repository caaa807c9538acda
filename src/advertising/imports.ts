import { Readable } from 'node:stream'
import { and, eq, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { performanceImports, performanceUploads } from '../db/schema'
import { type Executor, inTransaction, transaction } from '../db/tx'
import { fileParts, type ReceivedUpload } from '../http/upload'
import { notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { checkUpload, decompressed, type ImportFormat, type ParsedRow, parseImport, scanImport } from './import-file'
import { lockCampaigns, refusedByTotals, rowRuleProblem, upsertPerformance } from './performance'
import { performanceImportQueue } from './queues'
import { reportsChanged } from './report-cache'

type ImportRow = typeof performanceImports.$inferSelect
const SAMPLE = 20
/** The source of imported rows that name none. */
export const IMPORT_SOURCE = 'import'

export const importResource = (row: ImportRow) => ({
  id: toShortId(row.id),
  status: row.status,
  file_name: row.fileName,
  format: row.format,
  source: row.source,
  total: row.total,
  processed: row.processed,
  progress:
    row.status === 'succeeded' ? 100 : row.total ? Math.min(99, Math.floor((row.processed / row.total) * 100)) : 0,
  counts: {
    created: row.createdRows,
    updated: row.updatedRows,
    unchanged: row.unchangedRows,
    rejected: row.rejectedRows,
  },
  errors: row.rejectedSample,
  error: row.error,
  created: row.created.toISOString(),
  started_at: row.startedAt?.toISOString() ?? null,
  finished_at: row.finishedAt?.toISOString() ?? null,
})

export type ImportUpload = {
  /** the file as received (streamed to a temporary file by the route) */
  file: ReceivedUpload
  fileName?: string
  format?: ImportFormat
  source?: string
}

/** Records the upload and queues its job in one transaction; a CSV without the columns is 422 here. */
export async function createImport(ex: Executor, organizationId: string, upload: ImportUpload) {
  const format = checkUpload(upload.file.head, upload.file.size, upload.file.contentType, upload.format)
  return inTransaction(ex, async (tx) => {
    const [row] = await tx
      .insert(performanceImports)
      .values({
        organizationId,
        format,
        fileName: upload.fileName ?? (format === 'csv' ? 'upload.csv' : 'upload.jsonl'),
        source: upload.source ?? IMPORT_SOURCE,
      })
      .returning()
    // stored in parts of 1 MiB, read one at a time (the file is never held whole)
    let part = 0
    for await (const content of fileParts(upload.file.path))
      await tx.insert(performanceUploads).values({ importId: row!.id, part: ++part, content })
    await performanceImportQueue.send(tx, { importId: row!.id }, { singletonKey: row!.id })
    return importResource(row!)
  })
}

export async function getImport(ex: Executor, organizationId: string, id: string) {
  const [row] = await ex
    .select()
    .from(performanceImports)
    .where(and(eq(performanceImports.id, id), eq(performanceImports.organizationId, organizationId)))
  if (!row) throw notFound('performance import')
  return importResource(row)
}

/**
 * Ends an import as failed with the reason (its committed chunks stay written), its uploaded bytes
 * dropped in the same transaction: a reader who sees it failed never finds them still stored.
 */
export function failImport(ex: Executor, id: string, reason: string) {
  return inTransaction(ex, async (tx) => {
    await tx
      .update(performanceImports)
      .set({ status: 'failed', error: reason, finishedAt: new Date() })
      .where(eq(performanceImports.id, id))
    await tx.delete(performanceUploads).where(eq(performanceUploads.importId, id))
  })
}

/**
 * Writes one chunk: rows of unknown or archived campaigns, and rows the campaign cannot have (more
 * clicks than impressions, a day outside its window), are refused; the others upserted.
 */
async function writeChunk(importRow: ImportRow, chunk: ParsedRow[], index: number) {
  await transaction(async (tx) => {
    const ids = [...new Set(chunk.flatMap((r) => (r.value ? [r.value.campaignId] : [])))].sort()
    const locked = await lockCampaigns(tx, importRow.organizationId, ids)
    const rejected: { row: number; input: string; reason: string }[] = []
    const rows: ParsedRow[] = []
    for (const r of chunk) {
      const campaign = r.value ? locked.get(r.value.campaignId) : undefined
      const problem = r.value && campaign ? rowRuleProblem(r.value, campaign) : null
      if (!r.value) rejected.push({ row: r.row, input: r.input, reason: r.reason! })
      else if (campaign === undefined)
        rejected.push({ row: r.row, input: r.input, reason: 'no campaign of your organization has this campaign_id' })
      else if (campaign.status === 'archived')
        rejected.push({ row: r.row, input: r.input, reason: 'the campaign is archived: its performance is refused' })
      else if (problem) rejected.push({ row: r.row, input: r.input, reason: `${problem.field}: ${problem.reason}` })
      else rows.push(r)
    }
    // a row that would take its campaign's totals past their bounds is refused like a bad value
    const refused = await refusedByTotals(
      tx,
      rows.map((r) => r.value!),
    )
    for (const [i, { reason }] of refused) rejected.push({ row: rows[i]!.row, input: rows[i]!.input, reason })
    rejected.sort((a, b) => a.row - b.row)
    const counts = await upsertPerformance(
      tx,
      rows.flatMap((r, i) => (refused.has(i) ? [] : [r.value!])),
    )
    if (counts.created + counts.updated > 0) await reportsChanged(tx, importRow.organizationId)
    // the chunk's figures commit with its rows: a retried job resumes after the last committed chunk
    await tx
      .update(performanceImports)
      .set({
        chunksDone: index,
        processed: sql`${performanceImports.processed} + ${chunk.length}`,
        createdRows: sql`${performanceImports.createdRows} + ${counts.created}`,
        updatedRows: sql`${performanceImports.updatedRows} + ${counts.updated}`,
        unchangedRows: sql`${performanceImports.unchangedRows} + ${counts.unchanged}`,
        rejectedRows: sql`${performanceImports.rejectedRows} + ${rejected.length}`,
        rejectedSample: sql`(${performanceImports.rejectedSample} || ${JSON.stringify(rejected.slice(0, SAMPLE))}::jsonb)`,
      })
      .where(eq(performanceImports.id, importRow.id))
  })
}

/** The stored upload's parts in order, read one at a time. */
async function* uploadParts(id: string, first: Buffer): AsyncGenerator<Buffer> {
  yield first
  for (let part = 2; ; part++) {
    const [row] = await db
      .select({ content: performanceUploads.content })
      .from(performanceUploads)
      .where(and(eq(performanceUploads.importId, id), eq(performanceUploads.part, part)))
    if (!row) return
    yield row.content
  }
}

/**
 * The `advertising.performance-import` job: reads the file twice as it streams from the database
 * (never whole in memory): once to count its rows and find which of a repeated campaign, date and
 * source wins, then to write it in chunks of PERFORMANCE_CHUNK_ROWS rows, each in its own
 * transaction with the import's progress. Chunks depend only on the file, so a retried job skips
 * the chunks already committed.
 */
export async function runImport(id: string) {
  const [row] = await db.select().from(performanceImports).where(eq(performanceImports.id, id))
  if (!row || row.status === 'succeeded' || row.status === 'failed') return
  const [first] = await db
    .select({ content: performanceUploads.content })
    .from(performanceUploads)
    .where(and(eq(performanceUploads.importId, id), eq(performanceUploads.part, 1)))
  if (!first) return failImport(db, id, 'the uploaded file is gone')
  const text = () => decompressed(Readable.from(uploadParts(id, first.content)), first.content)
  let scan: Awaited<ReturnType<typeof scanImport>>
  try {
    scan = await scanImport(text(), row.format, row.source)
  } catch (err) {
    return failImport(db, id, `the file cannot be read: ${(err as Error).message}`)
  }
  await db
    .update(performanceImports)
    .set({ status: 'running', total: scan.total, startedAt: row.startedAt ?? new Date() })
    .where(eq(performanceImports.id, id))
  const size = config.PERFORMANCE_CHUNK_ROWS
  let chunk: ParsedRow[] = []
  let index = 0
  const flush = async () => {
    index++
    if (index > row.chunksDone) await writeChunk(row, chunk, index)
    chunk = []
  }
  for await (const parsed of parseImport(text(), row.format, row.source, scan)) {
    chunk.push(parsed)
    if (chunk.length === size) await flush()
  }
  if (chunk.length) await flush()
  await transaction(async (tx) => {
    await tx
      .update(performanceImports)
      .set({
        status: 'succeeded',
        finishedAt: new Date(),
        rejectedSample: sql`(select coalesce(jsonb_agg(e), '[]'::jsonb) from (select e from jsonb_array_elements(${performanceImports.rejectedSample}) e limit ${SAMPLE}) s)`,
      })
      .where(eq(performanceImports.id, id))
    await tx.delete(performanceUploads).where(eq(performanceUploads.importId, id))
  })
}
