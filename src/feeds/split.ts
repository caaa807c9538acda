import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { feedRunChunks, feedRuns, feedUploads } from '../db/schema'
import { transaction } from '../db/tx'
import { uploadDir } from '../http/upload'
import { feedSize } from './adapters'
import type { ColumnMapping } from './adapters/affiliate'
import { DEFAULT_INFLATE_LIMITS, headRefusal, readHead } from './adapters/input'
import { type ChunkToSave, saveChunks } from './chunks'
import { readChunks } from './read-chunks'
import { failRun, finishIfComplete } from './runs'
import { copyUpload } from './uploads'

/** How much of a file's start is judged before it is read (headRefusal). */
const HEAD_BYTES = 64 * 1024

/**
 * Chunks are stored together until their payloads and rejected samples reach this many characters,
 * or there are this many of them, or the file ends: a chunk of the default 2,500 rows (0.6-1.5 M
 * characters of the sample feeds' and the bench's rows) is past it alone and goes at once; chunks
 * of a few rows go up to a hundred to a transaction instead of one each (a run of 250 ten-row
 * chunks was split in 2-3 s at one transaction a chunk, 0.3 s so).
 */
const SAVE_BATCH = { chars: 512 * 1024, chunks: 100 }

/**
 * The `feeds.import` job: streams the run's file through its adapter and stores it as chunks of
 * FEED_CHUNK_ROWS rows, each its own `feeds.chunk` job. Chunk boundaries depend only on the file,
 * so a restarted split skips the chunks it stored before and resumes. A file that cannot be read
 * to its end fails the run with the reason; chunks stored before stay and are written. A file the
 * run downloaded itself (a scheduled URL) is removed once read.
 */
export async function splitRun(runId: string) {
  const [run] = await db.select().from(feedRuns).where(eq(feedRuns.id, runId))
  if (!run || run.status === 'succeeded' || run.status === 'failed') return
  await db
    .update(feedRuns)
    .set({ status: 'running', startedAt: run.startedAt ?? new Date() })
    .where(eq(feedRuns.id, runId))
  const [stored] = await db
    .select({ last: sql<number>`coalesce(max(${feedRunChunks.chunk}), 0)::int` })
    .from(feedRunChunks)
    .where(eq(feedRunChunks.runId, runId))
  let path = run.path
  let scratch: string | null = null
  if (!path) {
    // the upload is copied part by part to a scratch file under DATA_DIR (not the system's
    // temporary folder, often memory), read from there as a server file is
    await mkdir(uploadDir(), { recursive: true })
    const copy = join(uploadDir(), `feed-${runId}`)
    scratch = copy
    const copied = await copyUpload(runId, copy).catch(async (err) => {
      await rm(copy, { force: true })
      throw err
    })
    if (!copied) {
      await rm(copy, { force: true })
      return failRun(db, runId, 'the uploaded file is gone')
    }
    path = scratch
  }
  // an upload (a tenant's file) is also bounded in decompressed size; any gzip in ratio
  const limits = run.path
    ? DEFAULT_INFLATE_LIMITS
    : {
        ...DEFAULT_INFLATE_LIMITS,
        maxBytes: config.FEED_DECOMPRESSED_MAX_MB * 1024 * 1024,
        maxBytesName: 'FEED_DECOMPRESSED_MAX_MB',
      }
  // a scheduled run's download is read once: its rows now live in the chunks
  const removeDownload = () => (run.options.downloaded ? rm(path, { force: true }) : Promise.resolve())
  try {
    // a file that is not a feed of its format is refused before a row of it is read (a server
    // path, or an upload whose format was named, is first seen here); an unreadable head is left
    // to the reading below, which names why
    const head = await readHead(run.format === 'usda_csv' ? join(path, 'food.csv') : path, HEAD_BYTES, limits).catch(
      () => null,
    )
    const refusal =
      head &&
      headRefusal(run.format, head, {
        mapping: run.options.mapping as Record<string, string> | undefined,
        whole: head.length < HEAD_BYTES,
      })
    if (refusal) {
      await transaction(async (tx) => {
        await failRun(tx, runId, `the file ${refusal}`)
        await tx.delete(feedUploads).where(eq(feedUploads.runId, runId))
      })
      await removeDownload()
      return
    }
    const size = await feedSize(path).catch(() => null)
    await db.update(feedRuns).set({ bytesTotal: size }).where(eq(feedRuns.id, runId))
    let chunk = 0
    let bytes = 0
    const spec = {
      format: run.format,
      path,
      mapping: run.options.mapping as ColumnMapping | undefined,
      observedAt: run.created,
      limits,
    }
    let pending: ChunkToSave[] = []
    let pendingChars = 0
    for await (const part of readChunks(spec, config.FEED_CHUNK_ROWS)) {
      bytes = part.bytes
      // an empty file still stores one (empty) chunk, which finishes its run; a broken one, none
      if (part.read > 0 || (part.done && !part.error && chunk === 0)) {
        chunk++
        if (chunk > stored!.last) {
          pending.push({ chunk, part })
          pendingChars += part.payload.length
          for (const r of part.sample) pendingChars += r.reason.length + r.input.length
        }
      }
      // what was read before a break is stored before the run fails
      const full = pendingChars >= SAVE_BATCH.chars || pending.length >= SAVE_BATCH.chunks
      if (full || part.done || part.error) {
        await saveChunks(run, pending, bytes)
        pending = []
        pendingChars = 0
      }
      if (part.error) {
        await transaction(async (tx) => {
          await failRun(tx, runId, part.error!)
          // the file is read no further: its stored upload goes
          await tx.delete(feedUploads).where(eq(feedUploads.runId, runId))
        })
        await removeDownload()
        return
      }
    }
    await transaction(async (tx) => {
      await tx
        .update(feedRuns)
        .set({ chunksTotal: chunk, bytesRead: size ?? bytes })
        .where(eq(feedRuns.id, runId))
      await finishIfComplete(tx, runId)
    })
    await removeDownload()
  } finally {
    if (scratch) await rm(scratch, { force: true })
  }
}
