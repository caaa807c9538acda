import { open } from 'node:fs/promises'
import { and, eq } from 'drizzle-orm'
import { db } from '../db/client'
import { feedUploads } from '../db/schema'
import type { Tx } from '../db/tx'
import { fileParts, type ReceivedUpload } from '../http/upload'
import { invalidField } from '../shared/errors'
import { gunzipHead, isGzip } from '../shared/inflate'
import type { FeedFormat, FeedSource } from './adapters'
import { headRefusal } from './adapters/input'

/**
 * An uploaded feed lives in PostgreSQL (the api and worker processes share nothing else) as parts
 * of 1 MiB, written and read one at a time: neither side ever holds the file.
 */
export async function storeUpload(tx: Tx, runId: string, file: ReceivedUpload) {
  let part = 0
  for await (const content of fileParts(file.path))
    await tx.insert(feedUploads).values({ runId, part: ++part, content })
}

/** Writes a run's uploaded file to `dest`, part by part; false when it is gone. */
export async function copyUpload(runId: string, dest: string): Promise<boolean> {
  const out = await open(dest, 'w', 0o600)
  try {
    for (let part = 1; ; part++) {
      const [row] = await db
        .select({ content: feedUploads.content })
        .from(feedUploads)
        .where(and(eq(feedUploads.runId, runId), eq(feedUploads.part, part)))
      if (!row) return part > 1
      await out.write(row.content)
    }
  } finally {
    await out.close()
  }
}

/** The head withUpload keeps of an upload (64 KiB; a shorter head is the whole body). */
const UPLOAD_HEAD = 64 * 1024

/**
 * The format of an upload from its first bytes: gzip is looked into; "{" starts JSON. Bytes that
 * are not a feed of that format (binary, not UTF-8, no identifying column: headRefusal) are 422
 * here, before the rest of the body is read, naming what was expected and what was found.
 */
export function uploadFormat(source: FeedSource, head: Buffer): FeedFormat {
  const bytes = openedHead(head)
  const format = formatOf(source, bytes)
  // a head shorter than the head a route keeps is the whole upload (a gzip's never is: it is cut)
  const refusal = headRefusal(format, bytes, { whole: !isGzip(head) && head.length < UPLOAD_HEAD })
  if (refusal) throw invalidField('body', refusal)
  return format
}

/** An upload's first bytes, decompressed when they are gzip (422 when its header does not open). */
function openedHead(head: Buffer): Buffer {
  if (!isGzip(head)) return head
  try {
    return gunzipHead(head)
  } catch {
    throw invalidField('body', 'is not valid gzip (its header does not open)')
  }
}

function formatOf(source: FeedSource, bytes: Buffer): FeedFormat {
  if (source === 'affiliate') return 'merchant_csv'
  const first = new TextDecoder()
    .decode(bytes.subarray(0, 64))
    .replace(/^\uFEFF/, '')
    .trimStart()[0]
  if (source === 'usda' && first !== '{')
    throw invalidField('body', 'the USDA CSV download is a folder of files: import it from a server path')
  return source === 'off' ? (first === '{' ? 'off_jsonl' : 'off_csv') : 'usda_json'
}
