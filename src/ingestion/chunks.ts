import { and, eq, inArray, sql } from 'drizzle-orm'
import { DATA_SOURCE_OF } from '../../feeds'
import type { FeedRecord, FeedRow } from '../../feeds/record'
import { promoteProducts } from '../catalog/promotion'
import { writeSourceRecords } from '../catalog/source-writes'
import { db } from '../db/client'
import { unnestRows } from '../db/params'
import { feedRecords, feedRunChunks, feedRuns, NIL_SCOPE, type RejectedRow, retailers } from '../db/schema'
import type { Tx } from '../db/tx'
import { upsertOffers } from './offers'
import { chunkQueue } from './queues'
import { finishIfComplete, runnerGroup, statementOf } from './runs'

/** A rejected row's text as jsonb can hold it: NUL and lone surrogates become U+FFFD. */
const storable = (text: string) => text.replaceAll('\0', '\uFFFD').toWellFormed()

const SAMPLE_PER_CHUNK = 20

/**
 * Stores one chunk of a run's rows and sends its job, once: a chunk already stored (the splitter
 * was restarted) is left as it is. Rejected rows are counted and sampled here; the records wait in
 * the chunk's payload for the chunk job.
 *
 * The job is fair to other runs: it is in its runner's group (at most FEED_CHUNKS_PER_ORGANIZATION
 * of a group are written at once), and its priority falls with its number, so the workers take
 * every run's chunk n before any run's chunk n+1: a run that starts behind a long one has its
 * first chunks written next, not after the long run's thousands.
 */
export async function saveChunk(
  run: { id: string; contributorId: string | null },
  chunk: number,
  rows: FeedRow[],
  bytesRead: number,
) {
  const runId = run.id
  const records = rows.flatMap((r) => ('record' in r ? [r.record] : []))
  const rejected = rows.flatMap((r) =>
    'rejected' in r ? [{ line: r.line, reason: storable(r.rejected), input: storable(r.input) }] : [],
  )
  await db.transaction(async (tx) => {
    const stored = await tx
      .insert(feedRunChunks)
      .values({
        runId,
        chunk,
        payload: records,
        read: rows.length,
        rejected: rejected.length,
        rejectedSample: rejected.slice(0, SAMPLE_PER_CHUNK) as RejectedRow[],
      })
      .onConflictDoNothing()
      .returning({ chunk: feedRunChunks.chunk })
    if (stored.length)
      await chunkQueue.send(
        tx,
        { runId, chunk },
        { singletonKey: `${runId}:${chunk}`, group: runnerGroup(run), priority: -chunk },
      )
    await tx.update(feedRuns).set({ bytesRead }).where(eq(feedRuns.id, runId))
  })
}

type Keyed = FeedRecord & { key: string; hash: string }

const hashOf = (r: FeedRecord) =>
  new Bun.CryptoHasher('md5').update(JSON.stringify([r.fields, r.offer ?? null])).digest('hex')

/**
 * Writes one chunk (the `feeds.chunk` job), all or nothing, at most once: a chunk already done is
 * skipped, so a retried job writes nothing twice. A record whose content hash matches what the
 * source said last time through the same runner is counted unchanged and written nowhere; the
 * others become candidates of the run's statement (statementOf, replacing that statement's earlier
 * values), their products are promoted in the same transaction, and an affiliate feed's offers are
 * upserted (the retailer's own data, whoever runs its feed).
 */
export async function writeChunk(tx: Tx, runId: string, chunk: number) {
  const [row] = await tx
    .select()
    .from(feedRunChunks)
    .where(and(eq(feedRunChunks.runId, runId), eq(feedRunChunks.chunk, chunk)))
    .for('update')
  if (!row || row.status === 'done') return false
  const [run] = await tx.select().from(feedRuns).where(eq(feedRuns.id, runId))
  const source = DATA_SOURCE_OF[run!.source]
  const scope = run!.retailerId ?? NIL_SCOPE
  // what this runner's earlier runs of the source said (the platform's, or one organization's)
  const runner = run!.contributorId ?? NIL_SCOPE
  const [retailer] = run!.retailerId
    ? await tx
        .select({ id: retailers.id, organizationId: retailers.organizationId })
        .from(retailers)
        .where(eq(retailers.id, run!.retailerId))
    : []
  const statement = statementOf(run!, retailer?.organizationId ?? null)

  // the newest record of each key (a GTIN; an affiliate feed's item id)
  const byKey = new Map<string, Keyed>()
  for (const r of (row.payload ?? []) as FeedRecord[]) {
    const key = r.offer ? r.offer.itemId : r.gtin14
    const seen = byKey.get(key)
    if (!seen || r.version >= seen.version) byKey.set(key, { ...r, key, hash: hashOf(r) })
  }
  const keys = [...byKey.keys()]
  // this runner's last statement of these keys from this source and feed
  const recordsOf = (list: string[]) =>
    and(
      eq(feedRecords.source, source),
      eq(feedRecords.scope, scope),
      eq(feedRecords.contributorId, runner),
      inArray(feedRecords.key, list),
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
  for (const r of byKey.values()) {
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
    { decideNew: true },
  )
  // new products were written with their decided values; the others are promoted now
  await promoteProducts(
    tx,
    [...new Set(changed.filter((r) => !r.offer?.multipack).map((r) => ids.get(r.gtin14)!))].filter(
      (id) => !created.has(id),
    ),
  )
  if (changed.length)
    await tx.execute(sql`insert into feed_records
        (source, scope, contributor_id, key, gtin, product_id, content_hash, version, reading, last_run_id, full_run_id)
      select ${source}, ${scope}::uuid, ${runner}::uuid, key, gtin, product_id, content_hash, version, reading,
        ${runId}::uuid, ${run!.full ? runId : null}::uuid
      from ${unnestRows(changed, 'r', {
        key: ['text', (r) => r.key],
        gtin: ['text', (r) => r.gtin14],
        product_id: ['uuid', (r) => ids.get(r.gtin14)!],
        content_hash: ['text', (r) => r.hash],
        version: ['int8', (r) => r.version],
        reading: ['text', (r) => r.reading],
      })}
      on conflict (source, scope, contributor_id, key) do update set
        gtin = excluded.gtin, product_id = excluded.product_id, content_hash = excluded.content_hash,
        version = excluded.version, reading = excluded.reading, last_run_id = excluded.last_run_id,
        full_run_id = coalesce(excluded.full_run_id, feed_records.full_run_id)`)
  if (unchanged.length)
    await tx
      .update(feedRecords)
      .set({ lastRunId: runId, ...(run!.full ? { fullRunId: runId } : {}) })
      .where(recordsOf(unchanged))
  if (retailer)
    await upsertOffers(
      tx,
      retailer,
      changed.map((r) => ({ productId: ids.get(r.gtin14)!, gtin14: r.gtin14, offer: r.offer! })),
      run!.created,
    )

  const readings: Record<string, number> = {}
  for (const r of byKey.values()) readings[r.reading] = (readings[r.reading] ?? 0) + 1
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
  await tx
    .update(feedRunChunks)
    .set({
      status: 'done',
      payload: null,
      created: createdCount,
      updated: changed.length - createdCount,
      unchanged: unchanged.length + (row.read - row.rejected - byKey.size),
      readings,
      finishedAt: new Date(),
    })
    .where(and(eq(feedRunChunks.runId, runId), eq(feedRunChunks.chunk, chunk)))
  await finishIfComplete(tx, runId)
  return true
}
