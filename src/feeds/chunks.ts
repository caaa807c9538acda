import { and, eq, sql } from 'drizzle-orm'
import { promoteProducts } from '../catalog/promotion'
import { writeSourceRecords } from '../catalog/source-writes'
import { db } from '../db/client'
import { isUniqueViolation } from '../db/errors'
import { jsonInJsonbOrder } from '../db/jsonb-order'
import { arrayParam, unnestRows } from '../db/params'
import { feedRecords, feedRunChunks, feedRuns, NIL_SCOPE, type RejectedRow, retailers } from '../db/schema'
import { inSavepoint, type Tx } from '../db/tx'
import { sampleOf } from '../shared/text-records'
import { DATA_SOURCE_OF } from './adapters'
import type { FeedRecord } from './adapters/record'
import { upsertOffers } from './offers'
import { chunkQueue } from './queues'
import { storable } from './read-failure'
import { type ReadChunk, SAMPLE_PER_CHUNK } from './read-protocol'
import { finishIfComplete, runnerGroup, statementOf } from './runs'

/** A chunk the splitter read, numbered, waiting to be stored. */
export type ChunkToSave = { chunk: number; part: Pick<ReadChunk, 'payload' | 'read' | 'rejected' | 'sample'> }

/**
 * Stores some of a run's chunks, in order, and sends their jobs, once each: a chunk already stored
 * (the splitter was restarted) is left as it is. The reader's thread counted and sampled their
 * rejected rows and wrote their records as each payload's JSON; they wait there for the chunk jobs.
 * Several small chunks go in one transaction (the splitter gathers them: splitRun), so that a file
 * cut into chunks of a few rows is not stored at a transaction's round trips per chunk.
 *
 * The jobs are fair to other runs: each is in its runner's group (at most FEED_CHUNKS_PER_ORGANIZATION
 * of a group are written at once), and its priority falls with its number, so the workers take
 * every run's chunk n before any run's chunk n+1: a run that starts behind a long one has its
 * first chunks written next, not after the long run's thousands.
 */
export async function saveChunks(
  run: { id: string; contributorId: string | null },
  chunks: ChunkToSave[],
  bytesRead: number,
) {
  if (!chunks.length) return
  const runId = run.id
  await db.transaction(async (tx) => {
    const stored = await tx
      .insert(feedRunChunks)
      .values(
        chunks.map(({ chunk, part }) => ({
          runId,
          chunk,
          // the records (each with its line, so that one the chunk job cannot write is reported
          // where it is) as the reader's thread wrote them
          payload: part.payload,
          read: part.read,
          rejected: part.rejected,
          rejectedSample: part.sample,
        })),
      )
      .onConflictDoNothing()
      .returning({ chunk: feedRunChunks.chunk })
    await chunkQueue.insert(
      tx,
      stored.map(({ chunk }) => ({
        data: { runId, chunk },
        singletonKey: `${runId}:${chunk}`,
        group: runnerGroup(run),
        priority: -chunk,
      })),
    )
    await tx.update(feedRuns).set({ bytesRead }).where(eq(feedRuns.id, runId))
  })
}

/** A record as a chunk's payload holds it: with its line in the file, for a rejection's report. */
type StoredRecord = FeedRecord & { line?: number }
type Keyed = StoredRecord & { key: string; hash: string }

/**
 * A record's content hash: of its fields and offer with their keys in jsonb's order, as the hashes
 * stored before migration 0040 were (the records were read back from jsonb then; now from the text
 * the reader's thread wrote, in the adapters' order), so that a re-import after the upgrade still
 * finds its unchanged records unchanged. One call per record (the same md5 hex).
 */
const hashOf = (r: FeedRecord) => Bun.CryptoHasher.hash('md5', jsonInJsonbOrder([r.fields, r.offer ?? null]), 'hex')

/** A record that could not be written, as its chunk reports it. */
type Offender = { key: string; row: RejectedRow }

/** What one write of some of a chunk's records came to. */
type Written = { created: number; updated: number; unchanged: number }

/** The run a chunk belongs to, and whose statement its records become. */
type ChunkContext = {
  runId: string
  run: typeof feedRuns.$inferSelect
  source: (typeof DATA_SOURCE_OF)[keyof typeof DATA_SOURCE_OF]
  scope: string
  runner: string
  retailer: { id: string; organizationId: string } | undefined
  statement: ReturnType<typeof statementOf>
}

/**
 * Errors of the connection, the server or the transaction's luck (SQLSTATE classes 08, 40, 53, 55,
 * 57, 58): not a record's fault, so the chunk is retried as a whole instead of its records rejected.
 */
function transient(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code ?? (err as { cause?: { code?: unknown } })?.cause?.code
  return typeof code === 'string' && /^(08|40|53|55|57|58)/.test(code)
}

/** Why a record could not be written, without the statement and parameters a query error quotes. */
function reasonOf(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause
  const message = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err)
  return `not written: ${message}`.slice(0, 500)
}

/**
 * Writes one chunk (the `feeds.chunk` job), at most once: a chunk already done is skipped, so a
 * retried job writes nothing twice. A record whose content hash matches what the source said last
 * time through the same runner is counted unchanged and written nowhere; the others become
 * candidates of the run's statement (statementOf, replacing that statement's earlier values), their
 * products are promoted in the same transaction, and an affiliate feed's offers are upserted (the
 * retailer's own data, whoever runs its feed).
 *
 * One record never stops the others (issue 45, poison never spreads): the records are written in a
 * savepoint, and when that fails for a reason of the data, each half is tried again on its own
 * (bisection), down to the single record that fails, which is counted rejected with its line and
 * the reason. A transient failure (connection, deadlock, …) fails the job, which pg-boss retries.
 */
export async function writeChunk(tx: Tx, runId: string, chunk: number) {
  // The chunk's commit does not wait for its WAL to reach the disk: a crash that loses it loses the
  // job's completion too (written after it, durably, which flushes this commit first), so the job
  // is retried and the chunk, still `queued`, written again. Nothing acknowledged is lost.
  await tx.execute(sql`set local synchronous_commit = off`)
  const [row] = await tx
    .select()
    .from(feedRunChunks)
    .where(and(eq(feedRunChunks.runId, runId), eq(feedRunChunks.chunk, chunk)))
    .for('update')
  if (!row || row.status === 'done') return false
  // a run that failed (a file cut short, another chunk's attempts spent) still writes the chunks it
  // stored: their rows were read whole; the run keeps its status and reason
  const [run] = await tx.select().from(feedRuns).where(eq(feedRuns.id, runId))
  const [retailer] = run!.retailerId
    ? await tx
        .select({ id: retailers.id, organizationId: retailers.organizationId })
        .from(retailers)
        .where(eq(retailers.id, run!.retailerId))
    : []
  const context: ChunkContext = {
    runId,
    run: run!,
    source: DATA_SOURCE_OF[run!.source],
    scope: run!.retailerId ?? NIL_SCOPE,
    // what this runner's earlier runs of the source said (the platform's, or one organization's)
    runner: run!.contributorId ?? NIL_SCOPE,
    retailer,
    statement: statementOf(run!, retailer?.organizationId ?? null),
  }

  // the newest record of each key (a GTIN; an affiliate feed's item id)
  const records = (row.payload === null ? [] : JSON.parse(row.payload)) as StoredRecord[]
  const byKey = new Map<string, Keyed>()
  for (const r of records) {
    const key = r.offer ? r.offer.itemId : r.gtin14
    const seen = byKey.get(key)
    if (seen && r.version < seen.version) continue
    // the payload's own record, keyed in place (a copy per record was a clone of its every field)
    const keyed = r as Keyed
    keyed.key = key
    keyed.hash = hashOf(r)
    byKey.set(key, keyed)
  }
  const offenders: Offender[] = []
  const written = await writeSurviving(tx, context, [...byKey.values()], offenders)

  const readings: Record<string, number> = {}
  const refused = new Set(offenders.map((o) => o.key))
  for (const r of byKey.values()) if (!refused.has(r.key)) readings[r.reading] = (readings[r.reading] ?? 0) + 1
  const sample = [...(row.rejectedSample as RejectedRow[]), ...offenders.map((o) => o.row)]
    .sort((a, b) => a.line - b.line)
    .slice(0, SAMPLE_PER_CHUNK)
  await tx
    .update(feedRunChunks)
    .set({
      status: 'done',
      payload: null,
      created: written.created,
      updated: written.updated,
      // records superseded by a newer one of the same key in this chunk are unchanged too
      unchanged: written.unchanged + (records.length - byKey.size),
      rejected: row.rejected + offenders.length,
      rejectedSample: sample,
      readings,
      finishedAt: new Date(),
    })
    .where(and(eq(feedRunChunks.runId, runId), eq(feedRunChunks.chunk, chunk)))
  await finishIfComplete(tx, runId)
  return true
}

/**
 * Writes the records in a savepoint; when that fails for a reason of the data, writes each half
 * the same way, so the records that can be written are, and each one that cannot is an offender.
 */
async function writeSurviving(
  tx: Tx,
  context: ChunkContext,
  list: Keyed[],
  offenders: Offender[],
  bisected = false,
): Promise<Written> {
  if (list.length === 0) return { created: 0, updated: 0, unchanged: 0 }
  try {
    return await inSavepoint(tx, () => writeRecords(tx, context, list, !bisected))
  } catch (err) {
    if (transient(err)) throw err
    if (list.length === 1) {
      const { key, line, gtin14, fields, offer } = list[0]!
      const input = storable(sampleOf(JSON.stringify({ gtin: gtin14, fields, offer })))
      offenders.push({ key, row: { line: line ?? 0, reason: storable(reasonOf(err)), input } })
      return { created: 0, updated: 0, unchanged: 0 }
    }
    const half = Math.ceil(list.length / 2)
    const a = await writeSurviving(tx, context, list.slice(0, half), offenders, true)
    const b = await writeSurviving(tx, context, list.slice(half), offenders, true)
    return { created: a.created + b.created, updated: a.updated + b.updated, unchanged: a.unchanged + b.unchanged }
  }
}

/**
 * Writes the given records of a chunk (one per key) in the caller's transaction, all or nothing.
 * `plainFirst`: rows read as absent are inserted plainly first, in a savepoint of their own (not
 * while a chunk is bisected: a savepoint that writes holds a subtransaction id until the chunk
 * commits, and past 64 of them every snapshot in the cluster reads pg_subtrans).
 */
async function writeRecords(tx: Tx, context: ChunkContext, list: Keyed[], plainFirst: boolean): Promise<Written> {
  const { runId, run, source, scope, runner, retailer, statement } = context
  const keys = list.map((r) => r.key)
  // this runner's last statement of these keys from this source and feed
  const recordsOf = (of: string[]) =>
    and(
      eq(feedRecords.source, source),
      eq(feedRecords.scope, scope),
      eq(feedRecords.contributorId, runner),
      // one array parameter, not a list of 2,500 (the primary key's index probes each: migration 0037)
      sql`${feedRecords.key} = any(${arrayParam(of, 'text')})`,
    )
  const known = new Map(
    keys.length
      ? (
          await tx
            .select({
              key: feedRecords.key,
              hash: feedRecords.contentHash,
              version: feedRecords.version,
              lastRunId: feedRecords.lastRunId,
            })
            .from(feedRecords)
            .where(recordsOf(keys))
        ).map((k) => [k.key, k])
      : [],
  )
  const changed: Keyed[] = []
  const unchanged: string[] = []
  for (const r of list) {
    const k = known.get(r.key)
    const olderInThisRun = k && k.lastRunId === runId && k.version > r.version
    if (olderInThisRun || k?.hash === r.hash) unchanged.push(r.key)
    else changed.push(r)
  }
  changed.sort((a, b) => (a.gtin14 < b.gtin14 ? -1 : a.gtin14 > b.gtin14 ? 1 : 0))

  // a merchant's multipack says nothing of the unit: its product must exist, its values stand
  const { ids, created } = await writeSourceRecords(
    tx,
    statement.source,
    changed.map((r) => ({ gtin14: r.gtin14, fields: r.offer?.multipack ? null : r.fields })),
    statement.contributorId,
    // the feed's own statement: its retailer's (an affiliate feed), else the source's feed
    // searchable after the chunk commits: the search feature's drain builds the documents in bulk
    { decideNew: true, scope, search: 'later', plainFirst },
  )
  // new products were written with their decided values; the others are promoted now
  await promoteProducts(
    tx,
    [...new Set(changed.filter((r) => !r.offer?.multipack).map((r) => ids.get(r.gtin14)!))].filter(
      (id) => !created.has(id),
    ),
    { search: 'later' },
  )
  await writeFeedRecords(
    tx,
    context,
    changed,
    (r) => ids.get(r.gtin14)!,
    (key) => known.has(key),
    plainFirst,
  )
  if (unchanged.length)
    await tx
      .update(feedRecords)
      .set({ lastRunId: runId, ...(run.full ? { fullRunId: runId } : {}) })
      .where(recordsOf(unchanged))
  if (retailer)
    await upsertOffers(
      tx,
      retailer,
      changed.map((r) => ({ productId: ids.get(r.gtin14)!, gtin14: r.gtin14, offer: r.offer! })),
      run.created,
    )

  // a product counts as created once, by the first record that made it
  const counted = new Set<string>()
  let createdCount = 0
  for (const r of changed) {
    const id = ids.get(r.gtin14)!
    if (created.has(id) && !counted.has(id)) {
      counted.add(id)
      createdCount++
    }
  }
  return { created: createdCount, updated: changed.length - createdCount, unchanged: unchanged.length }
}

/**
 * The feed records of the changed records: what this runner's source now says of each key, in key
 * order. When the chunk read every key as absent (a first import), they are inserted plainly (ON
 * CONFLICT makes every row a speculative insertion), in a savepoint; only when another transaction
 * recorded one meanwhile (23505) are they written again by an upsert. When it knew some, all are
 * one upsert.
 */
async function writeFeedRecords(
  tx: Tx,
  { runId, run, source, scope, runner }: ChunkContext,
  changed: Keyed[],
  productOf: (r: Keyed) => string,
  isKnown: (key: string) => boolean,
  plainFirst: boolean,
) {
  const write = (list: typeof changed, upsert: boolean) => sql`insert into feed_records
        (source, scope, contributor_id, key, gtin, product_id, content_hash, version, reading, last_run_id, full_run_id)
      select ${source}, ${scope}::uuid, ${runner}::uuid, key, gtin, product_id, content_hash, version, reading,
        ${runId}::uuid, ${run.full ? runId : null}::uuid
      from ${unnestRows(list, 'r', {
        key: ['text', (r) => r.key],
        gtin: ['text', (r) => r.gtin14],
        product_id: ['uuid', productOf],
        content_hash: ['text', (r) => r.hash],
        version: ['int8', (r) => r.version],
        reading: ['text', (r) => r.reading],
      })}
      ${
        upsert
          ? sql`on conflict (source, scope, contributor_id, key) do update set
        gtin = excluded.gtin, product_id = excluded.product_id, content_hash = excluded.content_hash,
        version = excluded.version, reading = excluded.reading, last_run_id = excluded.last_run_id,
        full_run_id = coalesce(excluded.full_run_id, feed_records.full_run_id)`
          : sql``
      }`
  // in key order: two chunks of one runner lock the records they share in the same order
  const sorted = changed.toSorted((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const fresh = sorted.filter((r) => !isKnown(r.key))
  // Known and fresh keys together are one upsert: written as two statements, each in key order, two
  // chunks that read a key differently (another run recorded it between their reads) took the rows'
  // locks in two different orders, and could deadlock (40P01, the chunk retried whole)
  if (fresh.length < sorted.length) {
    await tx.execute(write(sorted, true))
    return
  }
  if (!plainFirst) {
    await tx.execute(write(fresh, true))
    return
  }
  try {
    await inSavepoint(tx, () => tx.execute(write(fresh, false)))
  } catch (err) {
    if (!isUniqueViolation(err)) throw err
    await tx.execute(write(fresh, true))
  }
}
