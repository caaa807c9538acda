import { createReadStream } from 'node:fs'
import { and, eq } from 'drizzle-orm'
import { db } from '../db/client'
import { barcodeOutputs } from '../db/schema'
import type { Executor } from '../db/tx'

/**
 * Batch outputs kept in PostgreSQL (BATCH_STORE=postgres): the rendered file in `bytea` chunks, so
 * the process that serves the download needs nothing of the one that rendered it but the database.
 * Chunks rather than one value: neither side ever holds a whole zip of 10,000 PNGs in memory, and a
 * row stays far below PostgreSQL's 1 GB value limit.
 */
export const OUTPUT_CHUNK_BYTES = 1024 * 1024

/** Copies the file at `path` into the batch's chunks (replacing any earlier copy); returns its size. */
export async function storeOutput(tx: Executor, batchId: string, path: string): Promise<number> {
  await tx.delete(barcodeOutputs).where(eq(barcodeOutputs.batchId, batchId))
  let seq = 0
  let size = 0
  for await (const chunk of createReadStream(path, { highWaterMark: OUTPUT_CHUNK_BYTES })) {
    const bytes = chunk as Buffer
    await tx.insert(barcodeOutputs).values({ batchId, seq: seq++, bytes })
    size += bytes.length
  }
  return size
}

/**
 * The stored output as a stream, read a chunk at a time as the client takes it. A chunk missing
 * before `size` bytes came (the output was swept meanwhile) ends the stream with an error, so a
 * client never takes a cut-short file for a whole one.
 */
export function outputStream(batchId: string, size: number): ReadableStream<Uint8Array> {
  let seq = 0
  let sent = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent >= size) return controller.close()
      const [row] = await db
        .select({ bytes: barcodeOutputs.bytes })
        .from(barcodeOutputs)
        .where(and(eq(barcodeOutputs.batchId, batchId), eq(barcodeOutputs.seq, seq)))
      if (!row) return controller.error(new Error(`batch output ${batchId} lost its chunk ${seq}`))
      seq++
      sent += row.bytes.length
      controller.enqueue(new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.length))
    },
  })
}

/** Removes a batch's stored output (retention); returns the chunks removed. */
export async function removeOutput(ex: Executor, batchId: string): Promise<number> {
  const gone = await ex
    .delete(barcodeOutputs)
    .where(eq(barcodeOutputs.batchId, batchId))
    .returning({ seq: barcodeOutputs.seq })
  return gone.length
}
