import { sql } from 'drizzle-orm'
import { config } from '../config'
import { db } from '../db/client'
import { arrayParam } from '../db/params'
import { type Executor, type Tx, transaction } from '../db/tx'
import { addSearchWords, buildSearchDocuments, sourceTable } from './documents'
import { searchIndexQueue } from './queues'
import type { Collection } from './types'
import { ensureCollections, typesenseEnabled } from './typesense/client'
import { pushDocuments } from './typesense/sync'

/**
 * Keeping the search documents in step with the catalog. A write through the API refreshes its
 * rows' documents in its own transaction (`refreshSearchDocuments`): searchable when it returns.
 * A bulk writer (a feed chunk) only marks its rows (`markSearchDocuments`: one row holding their
 * ids, `search_bulk_marks`), and the `search.documents` job rebuilds the marked documents after the
 * writer commits, thousands per statement (`drainSearchMarks`). In Typesense mode every write also
 * marks its rows (one row each, `search_index_pending`), and the drain sends their documents to
 * Typesense as well.
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
 * beside the import, on its cores. What is left when an import ends is built at about 8,300
 * documents a second on two cores with real labels (a real Open Food Facts label is eight times
 * the old bench rows' text, which were built at 12,000): a million-row import with all 1,000,000
 * left was searchable 121 and 123 s after its end; with 700,000 (the default since the eleventh
 * session), 775,000 were left and it was searchable 81 s after, the import 2-3 % slower, within the
 * spread: a million-row import's products are searchable within the issue's 120 s of its end. The
 * drain beside the import does not keep up with it (3,500 documents a second while it wrote 4,600
 * rows), so a longer import leaves more than that at its end (by that rate, about a million at 2.5
 * million rows: estimated, not measured).
 */
export const BULK_MAX_PENDING = config.SEARCH_BULK_MAX_PENDING

/** How many marks one drain transaction takes: one document statement per collection. */
export const DRAIN_BATCH = 5_000
/** How many documents go to Typesense in one import. */
export const TYPESENSE_BATCH = 500

/**
 * Marks rows whose documents are out of date, as a bulk writer's, in the writer's transaction, and
 * wakes the drain (a job sent in that transaction: it runs once the marks are committed). The ids
 * are one row, a set, whatever their number (a row per id was an insert into two indexes each, 5.6-5.9
 * µs of an imported row's statement time, against 0.5 for a set); sets larger than a drain step are
 * cut to its size. A row marked again is in a newer set, so a drain that took the older one meanwhile
 * leaves it. Sets are plain inserts: concurrent writers marking the same rows never wait for each
 * other, nor for a drain step holding an older set of theirs: the row's own lock orders a writer and
 * the step building it (lockRows). (`fresh` matters only to refreshSearchDocuments' single marks.)
 */
export async function markSearchDocuments(ex: Executor, collection: Collection, ids: string[], _options?: MarkOptions) {
  if (ids.length === 0) return
  const sorted = [...new Set(ids)].sort()
  for (let i = 0; i < sorted.length; i += DRAIN_BATCH) {
    const set = sorted.slice(i, i + DRAIN_BATCH)
    await ex.execute(sql`insert into search_bulk_marks (collection, ids, size)
      values (${collection}, ${arrayParam(set, 'uuid')}, ${set.length})`)
  }
  await searchIndexQueue.send(ex, {})
}

/**
 * `fresh`: the rows were created by the caller's transaction, so no mark of theirs can exist (their
 * ids are new and nobody else sees them before it commits): the marks are inserted plainly, not by
 * ON CONFLICT's speculative insertion of every row.
 */
type MarkOptions = { fresh?: boolean }

/** Marks rows one by one, drained at once (a single write's rows, in Typesense mode). */
async function mark(ex: Executor, collection: Collection, ids: string[], fresh: boolean) {
  if (ids.length === 0) return
  // in id order, so concurrent writers marking the same rows take their locks in the same order
  await ex.execute(sql`insert into search_index_pending (collection, id, marked)
    select ${collection}, id, clock_timestamp() from unnest(${arrayParam([...new Set(ids)].sort(), 'uuid')}) id order by id
    ${fresh ? sql`` : sql`on conflict (collection, id) do update set marked = excluded.marked`}`)
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
  if (typesenseEnabled()) await mark(ex, collection, ids, fresh)
  await buildSearchDocuments(ex, collection, ids)
}

/**
 * Wakes the drain to build every bulk mark now, held or not (a bulk writer is done: a feed run
 * ended), once the caller's transaction commits.
 */
export async function drainBulkMarksNow(ex: Executor) {
  await searchIndexQueue.send(ex, { now: true })
}

/**
 * How many rows are marked and not yet rebuilt (0: every committed write is searchable). A row in
 * two sets is counted twice.
 */
export async function pendingSearchDocuments(ex: Executor): Promise<number> {
  const result = await ex.execute<{ n: number }>(sql`select
    (select count(*) from search_index_pending)::int + (select coalesce(sum(size), 0) from search_bulk_marks)::int as n`)
  return result.rows[0]?.n ?? 0
}

/**
 * How long the bulk marks are held yet, in seconds (BULK_QUIET_SECONDS, BULK_MAX_WAIT_SECONDS,
 * BULK_MAX_PENDING); 0: drain them now (or there are none). Read on the database's clock, which
 * stamped the marks: the newest and oldest are two probes of the marked index. The waiting marks
 * are the sets' sizes summed: a row of a set per chunk (400 at a million rows), no count of rows
 * (counted one by one to 500,000 it was 88 ms, 18 s of a million-row import's database time).
 */
async function bulkHeldFor(): Promise<number> {
  const [held] = (
    await db.execute<{ quiet: number | null; waited: number | null; waiting: number }>(sql`select
      extract(epoch from clock_timestamp() - max(marked))::float8 as quiet,
      extract(epoch from clock_timestamp() - min(marked))::float8 as waited,
      coalesce(sum(size), 0)::float8 as waiting
    from search_bulk_marks`)
  ).rows
  if (held?.quiet == null || held.waited == null || held.waiting >= BULK_MAX_PENDING) return 0
  return Math.max(0, Math.min(BULK_QUIET_SECONDS - held.quiet, BULK_MAX_WAIT_SECONDS - held.waited))
}

type Marks = { collection: Collection; ids: string[]; marked: Date }

/**
 * The oldest sets that fit in DRAIN_BATCH ids (the first whatever its size), taken one by one:
 * each lock is a set the step takes, so another drain step skips only what this one drains.
 */
async function takeSets(tx: Tx) {
  const sets: (Marks & { size: number })[] = []
  for (let room = DRAIN_BATCH; room > 0; ) {
    const [set] = (
      await tx.execute<Marks & { size: number }>(sql`delete from search_bulk_marks m
        where m.id = (select id from search_bulk_marks ${sets.length ? sql`where size <= ${room}` : sql``}
          order by marked, id limit 1 for update skip locked)
        returning m.collection, m.ids::text[] as ids, m.size, m.marked`)
    ).rows
    if (!set) break
    sets.push(set)
    room -= set.size
  }
  return sets
}

/**
 * Takes the oldest marks of one kind, up to DRAIN_BATCH rows (bulk: whole sets, at least one),
 * skipping marks a writer or another drain step holds; returns them by collection, each row once,
 * and when the oldest was made.
 */
async function takeMarks(tx: Tx, bulk: boolean) {
  const rows: Marks[] = bulk
    ? await takeSets(tx)
    : (
        await tx.execute<{ collection: Collection; id: string; marked: Date }>(sql`delete from search_index_pending m
          where (m.collection, m.id) in (select collection, id from search_index_pending
            order by marked limit ${DRAIN_BATCH} for update skip locked)
          returning m.collection, m.id::text as id, m.marked`)
      ).rows.map((m) => ({ collection: m.collection, ids: [m.id], marked: m.marked }))
  const byCollection = new Map<Collection, Set<string>>()
  let taken = 0
  let oldest = new Date()
  for (const { collection, ids, marked } of rows) {
    const set = byCollection.get(collection) ?? new Set<string>()
    byCollection.set(collection, set)
    for (const id of ids) set.add(id)
    taken += ids.length
    if (new Date(marked) < oldest) oldest = new Date(marked)
  }
  return { taken, oldest, byCollection: new Map([...byCollection].map(([c, ids]) => [c, [...ids]])) }
}

/**
 * Locks the catalog rows of these marks (FOR NO KEY UPDATE, which a writer's UPDATE or DELETE and
 * another drain step's lock wait for, and a foreign key's check does not), skipping rows a writer
 * or another drain step holds; returns the ids of those it skipped. A step builds only the rows it
 * holds (and rows gone), in a statement after this one: READ COMMITTED reads them as of that later
 * statement, so of two steps building one row the later reads what the earlier committed or newer,
 * and a writer changing a row a step holds commits (and marks it again) after that step. Without the
 * lock a step could read a row, a writer change and mark it, a second step build the newer document
 * and commit, and the first then overwrite it with the older (a writer's newer mark is a new set,
 * which waits for no step). An API write building a row's document in its own transaction holds
 * the row (it changed it): a step skips it, or the write waits for the step and builds after it.
 * Skipping rather than waiting: a step never waits for a writer (whose transaction may wait for the
 * step's locks), nor builds a row another step is building. The lock is 3.6-4.1 µs a document
 * (pg_stat_statements, 300,000 rows), less than the row per mark it replaces cost the drain to delete.
 */
async function lockRows(tx: Tx, collection: Collection, ids: string[]): Promise<string[]> {
  const source = sql.raw(sourceTable(collection))
  const list = arrayParam(ids, 'uuid')
  // the rows there but not locked: held by another transaction (a row deleted since this
  // statement's snapshot is listed too; marked again, the next step finds it gone)
  const skipped = await tx.execute<{ id: string }>(sql`with locked as materialized (
      select id from ${source} where id = any(${list}) order by id for no key update skip locked)
    select s.id::text as id from ${source} s where s.id = any(${list}) and s.id not in (select id from locked)`)
  return skipped.rows.map((r) => r.id)
}

/**
 * Marks again, in the step's transaction, the rows it skipped (lockRows), as made when its oldest
 * mark was (a mark made again does not hold the bulk marks longer): the next step builds them.
 */
async function markAgain(tx: Tx, collection: Collection, ids: string[], bulk: boolean, marked: Date) {
  const list = arrayParam(ids.sort(), 'uuid')
  const at = marked.toISOString()
  await (bulk
    ? tx.execute(sql`insert into search_bulk_marks (collection, ids, size, marked)
        values (${collection}, ${list}, ${ids.length}, ${at})`)
    : tx.execute(sql`insert into search_index_pending (collection, id, marked)
        select ${collection}, id, ${at} from unnest(${list}) id order by id on conflict do nothing`))
}

/**
 * One drain step, in one transaction: takes up to `DRAIN_BATCH` marks of one kind (bulk sets or
 * single marks), oldest first, skipping marks a writer holds (its transaction keeps them for the next step),
 * locks their rows (lockRows: a row a writer or another step holds is marked again instead), rebuilds
 * the documents of those it holds (in Typesense mode sends them there too) and removes the marks. A failure rolls the step back:
 * the marks stay for the retry. The new names' words are added after the commit, so the step never
 * holds a word's lock while it waits for a document a writer holds (who may wait for that word).
 * Returns how many marks it took, less those it made again (`again`).
 */
async function drainStep(bulk: boolean): Promise<{ done: number; again: number }> {
  const written: [Collection, string[]][] = []
  const step = await transaction(async (tx) => {
    const { taken, oldest, byCollection } = await takeMarks(tx, bulk)
    let again = 0
    for (const collection of ['brand', 'retailer', 'product'] as const) {
      const ids = byCollection.get(collection) ?? []
      if (ids.length === 0) continue
      const skipped = await lockRows(tx, collection, ids)
      if (skipped.length > 0) await markAgain(tx, collection, skipped, bulk, oldest)
      again += skipped.length
      const held = new Set(skipped)
      const built = skipped.length > 0 ? ids.filter((id) => !held.has(id)) : ids
      written.push([collection, await buildSearchDocuments(tx, collection, built, { words: false })])
      if (typesenseEnabled()) await sendToTypesense(tx, collection, built)
    }
    return { done: taken - again, again }
  })
  for (const [collection, ids] of written) await addSearchWords(db, collection, ids)
  return step
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
 * DRAIN_BUDGET_MS it sends a job for the rest and returns. Returns how many marks it took (less
 * those made again: rows a writer or another drain held).
 */
export async function drainSearchMarks(
  concurrency = config.SEARCH_DRAIN_CONCURRENCY,
  { now = false }: { now?: boolean } = {},
): Promise<number> {
  if (typesenseEnabled()) await ensureCollections()
  const until = performance.now() + DRAIN_BUDGET_MS
  // asked again before each step: a drain that began in a pause of an import stops when it goes on
  let held = 0
  let again = false
  const step = async (bulk: boolean) => {
    const taken = await drainStep(bulk)
    if (taken.again > 0) again = true
    return taken.done
  }
  const bulkStep = async () => {
    held = now ? 0 : await bulkHeldFor()
    return held > 0 ? 0 : step(true)
  }
  let more = false
  const drains = Array.from({ length: concurrency }, async () => {
    let done = 0
    for (;;) {
      if (performance.now() > until) {
        more = true
        return done
      }
      // a step that only made marks again (rows writers hold) ends this drain: no spinning on them
      const n = (await step(false)) || (await bulkStep())
      if (n === 0) return done
      done += n
    }
  })
  const done = (await Promise.all(drains)).reduce((a, b) => a + b, 0)
  // the rest as any drain: an ended run's marks are quiet by then, another run's are held again;
  // marks made again (rows a writer held) a second later, as this drain was asked (`now` or not)
  if (more) await searchIndexQueue.send(db, {})
  else if (again) await searchIndexQueue.send(db, { now }, { startAfter: 1 })
  else if (held > 0) await searchIndexQueue.send(db, {}, { startAfter: Math.ceil(held) })
  return done
}
