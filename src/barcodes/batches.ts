import { mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { and, eq, isNull, lte, sql } from 'drizzle-orm'
import Papa from 'papaparse'
import { config } from '../config'
import { db } from '../db/client'
import { type BatchItem, barcodeBatches } from '../db/schema'
import { type Executor, inTransaction, type Tx, transaction } from '../db/tx'
import { AppError, invalidField, notFound } from '../shared/errors'
import { toShortId } from '../shared/ids'
import { type BatchOutput, type BatchPlan, renderBatch } from './batch-render'
import { MAX_BATCH_ITEMS } from './batch-schemas'
import { outputStream, removeOutput, storeOutput } from './outputs'
import { batchQueue } from './queues'
import { type SymbolSettings, withDefaults } from './schemas'
import type { TemplateName } from './sheet'

type BatchRow = typeof barcodeBatches.$inferSelect
const PREFIX = '/products/api/v1/barcode/batch'

/** Where batches are rendered (and kept, with BATCH_STORE=directory). */
export const batchDir = () => resolve(config.BATCH_DIR ?? join(config.DATA_DIR, 'batches'))

export const toBatchResource = (b: BatchRow) => ({
  id: toShortId(b.id),
  status: b.status,
  output: b.output,
  template: b.template,
  format: b.output === 'sheet' ? 'pdf' : String(b.settings.format),
  total: b.total,
  completed: b.completed,
  errors: b.errors,
  created: b.created.toISOString(),
  finished_at: b.finishedAt?.toISOString() ?? null,
  expires_at: b.expiresAt?.toISOString() ?? null,
  download_url: b.status === 'succeeded' && !b.expiredAt ? `${PREFIX}/${toShortId(b.id)}/download` : null,
})

/** Items from a CSV upload: header row with `gtin` and optional `label`; rows counted from 1. */
export function itemsFromCsv(csv: string): BatchItem[] {
  const parsed = Papa.parse<Record<string, string>>(csv.replace(/^\uFEFF/, ''), {
    header: true,
    skipEmptyLines: 'greedy',
    transformHeader: (h) => h.trim().toLowerCase(),
  })
  if (!parsed.meta.fields?.includes('gtin'))
    throw invalidField('body', 'the CSV needs a header row with a gtin column (and optionally label)')
  const items = parsed.data.map((r) => ({
    gtin: (r.gtin ?? '').trim(),
    ...(r.label?.trim() ? { label: r.label.trim().slice(0, 100) } : {}),
  }))
  if (items.length === 0) throw invalidField('body', 'the CSV has no data rows')
  if (items.length > MAX_BATCH_ITEMS)
    throw invalidField('body', `a batch takes at most ${MAX_BATCH_ITEMS} rows; got ${items.length}`)
  return items
}

/** Stores the batch and queues its `barcode.batch` job in one transaction (202). */
export async function createBatch(
  ex: Executor,
  organizationId: string,
  items: BatchItem[],
  settings: SymbolSettings,
  output: BatchOutput,
  template: TemplateName | undefined,
) {
  return inTransaction(ex, async (tx) => {
    await checkBatchLimits(tx, organizationId)
    const [row] = await tx
      .insert(barcodeBatches)
      .values({
        organizationId,
        items,
        settings,
        output,
        template: output === 'sheet' ? (template ?? 'a4-3x8') : null,
        total: items.length,
      })
      .returning()
    await batchQueue.send(tx, { batchId: row!.id })
    return toBatchResource(row!)
  })
}

/**
 * At most BATCH_CONCURRENT_LIMIT batches of an organization queued or running, and
 * BATCH_HOURLY_LIMIT started in any hour (429 with Retry-After). Counted under a per-organization
 * lock, so concurrent requests cannot both take the last place.
 */
async function checkBatchLimits(tx: Tx, organizationId: string) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`batches:${organizationId}`}))`)
  const [counts] = await tx
    .select({
      open: sql<number>`count(*) filter (where ${barcodeBatches.status} in ('queued', 'running'))::int`,
      hour: sql<number>`count(*) filter (where ${barcodeBatches.created} > now() - interval '1 hour')::int`,
      oldest: sql<Date | null>`min(${barcodeBatches.created}) filter (where ${barcodeBatches.created} > now() - interval '1 hour')`,
    })
    .from(barcodeBatches)
    .where(eq(barcodeBatches.organizationId, organizationId))
  if (counts!.open >= config.BATCH_CONCURRENT_LIMIT)
    throw new AppError(
      'rate_limited',
      `at most ${config.BATCH_CONCURRENT_LIMIT} batches may be queued or running at once; wait for one to finish`,
      undefined,
      { 'retry-after': '30' },
    )
  if (counts!.hour >= config.BATCH_HOURLY_LIMIT) {
    const oldest = counts!.oldest ? new Date(counts!.oldest).getTime() : Date.now()
    const wait = Math.max(1, Math.ceil((oldest + 3600_000 - Date.now()) / 1000))
    throw new AppError(
      'rate_limited',
      `at most ${config.BATCH_HOURLY_LIMIT} batches may be started per hour`,
      undefined,
      { 'retry-after': String(wait) },
    )
  }
}

async function ownBatch(organizationId: string, id: string) {
  const [row] = await db
    .select()
    .from(barcodeBatches)
    .where(and(eq(barcodeBatches.id, id), eq(barcodeBatches.organizationId, organizationId)))
  if (!row) throw notFound('batch')
  return row
}

export const getBatch = async (organizationId: string, id: string) =>
  toBatchResource(await ownBatch(organizationId, id))

/**
 * A succeeded batch's output, wherever it was kept when it succeeded: streamed from the database
 * (BATCH_STORE=postgres) or from its file (directory), so a change of the setting leaves earlier
 * batches downloadable.
 */
export async function batchDownload(organizationId: string, id: string) {
  const row = await ownBatch(organizationId, id)
  if (row.expiredAt)
    throw new AppError('gone', `the batch's output was removed at ${row.expiredAt.toISOString()}, after its retention`)
  const stored = row.outputStore === 'postgres' ? row.outputBytes !== null : row.filePath !== null
  if (row.status !== 'succeeded' || !stored)
    throw new AppError('conflict', `the batch is ${row.status}; download when it has succeeded`)
  const sheet = row.output === 'sheet'
  return {
    body: row.outputStore === 'postgres' ? outputStream(row.id, row.outputBytes!) : (Bun.file(row.filePath!) as Blob),
    contentType: sheet ? 'application/pdf' : 'application/zip',
    fileName: `barcodes-${toShortId(row.id)}.${sheet ? 'pdf' : 'zip'}`,
  }
}

/**
 * The `barcode.batch` job: renders from the first row on every attempt (a killed run leaves only a
 * `.part` file, removed or overwritten), reporting progress as it goes. Idempotent once succeeded.
 * With BATCH_STORE=postgres the rendered file is copied into the database in the transaction that
 * marks the batch succeeded, and removed from this host.
 */
export async function runBatch(batchId: string, finalAttempt: boolean) {
  const [batch] = await db.select().from(barcodeBatches).where(eq(barcodeBatches.id, batchId))
  if (!batch || batch.status === 'succeeded') return
  await db
    .update(barcodeBatches)
    .set({ status: 'running', completed: 0, errors: [], failure: null })
    .where(eq(barcodeBatches.id, batchId))
  const plan: BatchPlan = {
    items: batch.items,
    settings: withDefaults(batch.settings as Partial<SymbolSettings>),
    output: batch.output as BatchOutput,
    template: (batch.template ?? 'a4-3x8') as TemplateName,
  }
  mkdirSync(batchDir(), { recursive: true })
  const path = join(batchDir(), `${batchId}.${plan.output === 'sheet' ? 'pdf' : 'zip'}`)
  try {
    await renderBatch(plan, path, async (completed, errors) => {
      await db.update(barcodeBatches).set({ completed, errors }).where(eq(barcodeBatches.id, batchId))
    })
  } catch (err) {
    await db
      .update(barcodeBatches)
      .set({ status: finalAttempt ? 'failed' : 'queued', failure: err instanceof Error ? err.message : String(err) })
      .where(eq(barcodeBatches.id, batchId))
    throw err
  }
  const succeeded = { status: 'succeeded' as const, finishedAt: new Date() }
  const expiresAt = () => new Date(Date.now() + config.BATCH_RETENTION_HOURS * 3600_000)
  if (config.BATCH_STORE === 'directory') {
    await db
      .update(barcodeBatches)
      .set({ ...succeeded, outputStore: 'directory', filePath: path, expiresAt: expiresAt() })
      .where(eq(barcodeBatches.id, batchId))
    return
  }
  await transaction(async (tx) => {
    const size = await storeOutput(tx, batchId, path)
    await tx
      .update(barcodeBatches)
      .set({ ...succeeded, outputStore: 'postgres', outputBytes: size, filePath: null, expiresAt: expiresAt() })
      .where(eq(barcodeBatches.id, batchId))
  })
  rmSync(path, { force: true })
}

/** The `barcode.expire` job: removes the outputs (stored chunks or files) of batches past their retention. */
export async function expireBatches() {
  const due = await db
    .select({ id: barcodeBatches.id, filePath: barcodeBatches.filePath })
    .from(barcodeBatches)
    .where(and(lte(barcodeBatches.expiresAt, new Date()), isNull(barcodeBatches.expiredAt)))
  for (const batch of due) {
    if (batch.filePath) rmSync(batch.filePath, { force: true })
    await transaction(async (tx) => {
      await removeOutput(tx, batch.id)
      await tx
        .update(barcodeBatches)
        .set({ expiredAt: new Date(), filePath: null, outputBytes: null })
        .where(eq(barcodeBatches.id, batch.id))
    })
  }
  return due.length
}
