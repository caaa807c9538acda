import { sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { arrayParam } from '../db/params'
import { type Executor, transaction } from '../db/tx'
import { addSearchWords, buildSearchDocuments } from './documents'
import { searchIndexQueue } from './queues'
import type { Collection } from './types'
import { ensureCollections, typesenseEnabled } from './typesense/client'
import { pushDocuments } from './typesense/sync'

/**
 * Keeping the search documents in step with the catalog. A write through the API refreshes its
 * rows' documents in its own transaction (`refreshSearchDocuments`): searchable when it returns.
 * A bulk writer (a feed chunk) only marks its rows (`markSearchDocuments`, one statement), and the
 * `search.documents` job rebuilds the marked documents after the writer commits, thousands per
 * statement (`drainSearchMarks`). In Typesense mode every write also marks its rows, and the drain
 * sends their documents to Typesense as well.
 *
 * A bulk writer's marks wait until the bulk writers have gone quiet (no bulk mark for
 * BULK_QUIET_SECONDS: the import ended or paused), until the oldest has waited
 * BULK_MAX_WAIT_SECONDS, or while BULK_MAX_PENDING wait: building a document costs more CPU than
 * writing its product, and on a machine of few cores a drain running beside an import takes the
 * import's cores for the same total work (issue 45, 200,000 OFF rows: the import's database CPU
 * fell from 34.7 to 18.4 s with the drain held). A long import's products are still searchable in
 * bounded time, and an import that ends says so (`drainBulkMarksNow`): its products are searchable
 * once the drain has built them, without the wait. Marks of API writes (Typesense mode) are drained
 * at once.
 */
/** A bulk mark is held while another was made this recently (a chunk marks its rows a second or more before it commits). */
export const BULK_QUIET_SECONDS = 5
/** … and never longer than this after it was made, … */
export const BULK_MAX_WAIT_SECONDS = 300
/**
 * … nor while this many are waiting (SEARCH_BULK_MAX_PENDING): past it the drain builds documents
 * beside the import, on its cores. What is left when an import ends is built at about 12,000
 * documents a second on two cores (a million-row import, all 1,000,000 left: searchable 84 s after
 * its end; 800,000 left: 80 s after, the import 36 % of the catalog floor; 500,000 left: 51 s after,
 * 27 %), so its products are searchable within the issue's 120 s of a million-row import's end
 * however long it ran; a larger import builds the rest beside it.
 */
export const BULK_MAX_PENDING = config.SEARCH_BULK_MAX_PENDING

/** How many marks one drain transaction takes: one document statement per collection. */
export const DRAIN_BATCH = 5_000
/** How many documents go to Typesense in one import. */
export const TYPESENSE_BATCH = 500

/**
 * Marks rows whose documents are out of date, in the writer's transaction, and wakes the drain (a
 * job sent in that transaction: it runs once the marks are committed). A row marked again gets a
 * newer mark, so a drain that took the older one meanwhile leaves it (`drainSearchMarks`).
 */
export function markSearchDocuments(
  ex: Executor,
  collection: Collection,
  ids: string[],
  { fresh = false }: MarkOptions = {},
) {
  return mark(ex, collection, ids, true, fresh)
}

/**
 * `fresh`: the rows were created by the caller's transaction, so no mark of theirs can exist (their
 * ids are new and nobody else sees them before it commits): the marks are inserted plainly, not by
 * ON CONFLICT's speculative insertion of every row.
 */
type MarkOptions = { fresh?: boolean }

/** Marks rows, as a bulk writer's (held while bulk writers are busy) or not (drained at once). */
async function mark(ex: Executor, collection: Collection, ids: string[], bulk: boolean, fresh: boolean) {
  if (ids.length === 0) return
  // in id order, so concurrent writers marking the same rows take their locks in the same order;
  // a row marked by an API write too is drained at once
  // stamped when marked, not when the transaction began (bulkHeldFor reads how recent the marks are)
  await ex.execute(sql`insert into search_index_pending (collection, id, bulk, marked)
    select ${collection}, id, ${bulk}, clock_timestamp() from unnest(${arrayParam([...new Set(ids)].sort(), 'uuid')}) id order by id
    ${
      fresh
        ? sql``
        : sql`on conflict (collection, id) do update set marked = excluded.marked,
      bulk = search_index_pending.bulk and excluded.bulk`
    }`)
  await searchIndexQueue.send(ex, {})
}

/**
 * Rebuilds the documents of these rows now, in the caller's transaction: a product, brand or
 * retailer written through the API is found by the next search. In Typesense mode the rows are
 * also marked, first (a drain holding their marks is waited for before their documents are taken),
 * for the drain to send to Typesense once this commits.
 */
export async function refreshSearchDocuments(
  ex: Executor,
  collection: Collection,
  ids: string[],
  { fresh = false }: MarkOptions = {},
) {
  if (ids.length === 0) return
  if (typesenseEnabled()) await mark(ex, collection, ids, false, fresh)
  await buildSearchDocuments(ex, collection, ids)
}

/**
 * Wakes the drain to build every bulk mark now, held or not (a bulk writer is done: a feed run
 * ended), once the caller's transaction commits.
 */
export async function drainBulkMarksNow(ex: Executor) {
  await searchIndexQueue.send(ex, { now: true })
}

/** How many rows are marked and not yet rebuilt (0: every committed write is searchable). */
export async function pendingSearchDocuments(ex: Executor): Promise<number> {
  const result = await ex.execute<{ n: number }>(sql`select count(*)::int as n from search_index_pending`)
  return result.rows[0]?.n ?? 0
}

/** How long a count of the waiting marks is reused (bulkHeldFor). */
const WAITING_COUNTED_FOR_MS = 10_000
let waitingCount = { at: Number.NEGATIVE_INFINITY, n: 0 }

/**
 * How many marks wait, counted up to BULK_MAX_PENDING at most every WAITING_COUNTED_FOR_MS: near
 * the bound a count reads that many index entries (88 ms at 500,000), and asked before every drain
 * step it was 18 s of the database's time in a million-row import. PostgreSQL's own live-row
 * statistics would cost nothing, but read 0 after a crash or a statistics reset until the next
 * analyze (the bound then silently off).
 */
async function waitingMarks(): Promise<number> {
  if (performance.now() - waitingCount.at < WAITING_COUNTED_FOR_MS) return waitingCount.n
  const [row] = (
    await db.execute<{ n: number }>(sql`select count(*)::int as n
      from (select from search_index_pending where bulk limit ${BULK_MAX_PENDING}) w`)
  ).rows
  waitingCount = { at: performance.now(), n: row?.n ?? 0 }
  return waitingCount.n
}

/**
 * How long the bulk marks are held yet, in seconds (BULK_QUIET_SECONDS, BULK_MAX_WAIT_SECONDS,
 * BULK_MAX_PENDING); 0: drain them now (or there are none). Read on the database's clock, which
 * stamped the marks: the newest and oldest are two probes of the (bulk, marked) index.
 */
async function bulkHeldFor(): Promise<number> {
  const [times] = (
    await db.execute<{ quiet: number | null; waited: number | null }>(sql`select
      extract(epoch from clock_timestamp() - max(marked))::float8 as quiet,
      extract(epoch from clock_timestamp() - min(marked))::float8 as waited
    from search_index_pending where bulk`)
  ).rows
  if (times?.quiet == null || times.waited == null || (await waitingMarks()) >= BULK_MAX_PENDING) return 0
  return Math.max(0, Math.min(BULK_QUIET_SECONDS - times.quiet, BULK_MAX_WAIT_SECONDS - times.waited))
}

/**
 * One drain step, in one transaction: takes up to `DRAIN_BATCH` marks of one kind (bulk or not),
 * oldest first, skipping marks a writer holds (its transaction keeps them for the next step), rebuilds their documents
 * (in Typesense mode sends them there too) and removes the marks. A failure rolls the step back:
 * the marks stay for the retry. The new names' words are added after the commit, so the step never
 * holds a word's lock while it waits for a document a writer holds (who may wait for that word).
 * Returns how many marks it took.
 */
async function drainStep(bulk: boolean): Promise<number> {
  const written: [Collection, string[]][] = []
  const taken = await transaction(async (tx) => {
    const marks = await tx.execute<{ collection: Collection; id: string }>(sql`delete from search_index_pending m
      where (m.collection, m.id) in (select collection, id from search_index_pending where bulk = ${bulk}
        order by marked limit ${DRAIN_BATCH} for update skip locked)
      returning m.collection, m.id::text as id`)
    const byCollection = Map.groupBy(marks.rows, (m) => m.collection)
    for (const collection of ['brand', 'retailer', 'product'] as const) {
      const ids = (byCollection.get(collection) ?? []).map((m) => m.id)
      if (ids.length === 0) continue
      written.push([collection, await buildSearchDocuments(tx, collection, ids, { words: false })])
      if (typesenseEnabled()) await sendToTypesense(tx, collection, ids)
    }
    return marks.rows.length
  })
  for (const [collection, ids] of written) await addSearchWords(db, collection, ids)
  return taken
}

/**
 * Typesense mode: the rows' documents in imports of TYPESENSE_BATCH; a product's brand too, whose
 * product count moves with it.
 */
async function sendToTypesense(ex: Executor, collection: Collection, ids: string[]) {
  for (let i = 0; i < ids.length; i += TYPESENSE_BATCH)
    await pushDocuments(ex, collection, ids.slice(i, i + TYPESENSE_BATCH))
  if (collection !== 'product') return
  const brands = await ex.execute<{ id: string }>(sql`select distinct brand_id::text as id from products
    where id = any(${arrayParam(ids, 'uuid')}) and brand_id is not null`)
  const brandIds = brands.rows.map((b) => b.id)
  for (let i = 0; i < brandIds.length; i += TYPESENSE_BATCH)
    await pushDocuments(ex, 'brand', brandIds.slice(i, i + TYPESENSE_BATCH))
}

/** How long one drain job works before it hands the rest to a new job (pg-boss expires long jobs). */
const DRAIN_BUDGET_MS = 60_000

/**
 * The `search.documents` job: drains until no mark is left, in SEARCH_DRAIN_CONCURRENCY transactions
 * at once (each takes marks the others do not hold): the marks of API writes, then the bulk marks
 * unless they are held (bulkHeldFor; `now`: they are not), in which case a job is sent for when they no longer are. Past
 * DRAIN_BUDGET_MS it sends a job for the rest and returns. Returns how many marks it took.
 */
export async function drainSearchMarks(
  concurrency = config.SEARCH_DRAIN_CONCURRENCY,
  { now = false }: { now?: boolean } = {},
): Promise<number> {
  if (typesenseEnabled()) await ensureCollections()
  const until = performance.now() + DRAIN_BUDGET_MS
  // asked again before each step: a drain that began in a pause of an import stops when it goes on
  let held = 0
  const bulkStep = async () => {
    held = now ? 0 : await bulkHeldFor()
    return held > 0 ? 0 : drainStep(true)
  }
  let more = false
  const drains = Array.from({ length: concurrency }, async () => {
    let done = 0
    for (;;) {
      if (performance.now() > until) {
        more = true
        return done
      }
      const n = (await drainStep(false)) || (await bulkStep())
      if (n === 0) return done
      done += n
    }
  })
  const done = (await Promise.all(drains)).reduce((a, b) => a + b, 0)
  // the rest as any drain: an ended run's marks are quiet by then, another run's are held again
  if (more) await searchIndexQueue.send(db, {})
  else if (held > 0) await searchIndexQueue.send(db, {}, { startAfter: Math.ceil(held) })
  return done
}
