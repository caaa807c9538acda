import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql as q } from 'drizzle-orm'
import pg from 'pg'
import { transaction } from '../../../src/db/tx'
import { drainSearchMarks, markSearchDocuments, refreshSearchDocuments } from '../../../src/search'
import { eventually, sql, uniqueGtin } from '../../support/fixtures'
import { marksOf } from '../../support/search-marks'
import { databaseUrl } from '../../support/server'

// The order of a product's document builds when a bulk writer's marks are sets (one row per marking
// statement): a writer marking a product again makes a new set and waits for no drain step, so the
// drain itself must order two steps building one product. The interleavings are driven by the test:
// a transaction of its own holds a row the drain needs, and the test waits until the drain's or the
// writer's session is seen waiting for a lock (pg_stat_activity), never for a time.

let holder: pg.Client
beforeAll(async () => {
  holder = new pg.Client({ connectionString: databaseUrl })
  await holder.connect()
})
afterAll(() => holder.end())

const documentText = async (id: string) =>
  (await sql<{ search_text: string }>('select search_text from search_products where id = $1', [id]))[0]?.search_text
/** Whether a session waits for a lock held by `pid`. */
const waitsFor = async (pid: number) =>
  (await sql('select 1 from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [pid])).length > 0
/** Whether a session other than this one waits for a lock in a statement containing `text`. */
const waitingIn = async (text: string) =>
  (
    await sql(
      `select 1 from pg_stat_activity where pid <> pg_backend_pid() and wait_event_type = 'Lock'
        and position($1 in query) > 0`,
      [text],
    )
  ).length > 0

/**
 * Two products with documents, the first before the second in every order the drain's build may read
 * them in (their ids, their brands' ids, the order they and their brands were written), so that
 * the build reaches the first before the second, whatever its plan.
 */
async function twoProducts(first: string, second: string, brand: string) {
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()].sort() as [string, string]
  const [brandA, brandB] = [crypto.randomUUID(), crypto.randomUUID()].sort() as [string, string]
  await sql('insert into brands (id, name) values ($1, $2), ($3, $4)', [brandA, `${brand} A`, brandB, `${brand} B`])
  await sql('insert into products (id, gtin, product_name, brand_id) values ($1, $2, $3, $4), ($5, $6, $7, $8)', [
    a,
    uniqueGtin().padStart(14, '0'),
    first,
    brandA,
    b,
    uniqueGtin().padStart(14, '0'),
    second,
    brandB,
  ])
  await transaction((tx) => refreshSearchDocuments(tx, 'product', [a, b]))
  return [a, b] as const
}

/** A bulk writer's set of marks, made to look just marked for an hour: only a drain told `now` takes it. */
async function markHeld(ids: string[]) {
  await transaction((tx) => markSearchDocuments(tx, 'product', ids))
  await sql(`update search_bulk_marks set marked = now() + interval '1 hour' where ids && $1::uuid[]`, [ids])
}

/**
 * A drain step takes the marks of a product (and of a blocker before it) and is stopped by the test
 * after its read, holding the blocker's document; meanwhile `write` renames the product and (bulk)
 * marks it again or (API) rebuilds its document itself; a second step runs; then the first goes on.
 * Returns the product's name, its document and its marks once all is done.
 */
async function renamedDuringAStep(names: [string, string, string], renamed: string, write: 'bulk' | 'api') {
  const [blocker, product] = await twoProducts(...names)
  await markHeld([blocker, product])
  await holder.query('begin')
  await holder.query('select 1 from search_products where id = $1 for update', [blocker])
  const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
  const step1 = drainSearchMarks(1, { now: true })
  await eventually(() => waitsFor(holderPid), 20_000, 'the first drain step to wait for the held document')
  let writerDone = false
  const writer = transaction(async (tx) => {
    // the name as a literal: the statement's text shows it to waitingIn
    await tx.execute(q`update products set product_name = ${q.raw(`'${renamed}'`)} where id = ${product}`)
    await (write === 'bulk' ? markSearchDocuments : refreshSearchDocuments)(tx, 'product', [product])
  }).finally(() => {
    writerDone = true
  })
  // the writer commits at once, or waits for the first step (which holds the product)
  await eventually(async () => writerDone || (await waitingIn(renamed)), 20_000, 'the writer')
  // a second step takes what it can (the writer's set, if it committed) and commits
  await drainSearchMarks(1, { now: true })
  await holder.query('commit')
  await Promise.all([step1, writer])
  await drainSearchMarks(1, { now: true })
  // a drain job of the server's (one that marked again sends one) may hold the last mark a moment
  await eventually(async () => (await marksOf(product)) === 0, 20_000, 'the marks drained')
  const [row] = await sql<{ name: string }>('select product_name as name from products where id = $1', [product])
  return { product: row!.name, document: await documentText(product), marks: await marksOf(product) }
}

describe('search drain: of two steps building one product, the later reads the newer product', () => {
  test('a product changed and marked again while a step builds it ends with the newer document', async () => {
    const seen = await renamedDuringAStep(
      ['Brastovel Lintel', 'Plumbert Gammalon', 'Tessaly'],
      'Plumbert Betazed',
      'bulk',
    )
    expect(seen).toEqual({ product: 'Plumbert Betazed', document: 'plumbert betazed tessaly b', marks: 0 })
  })

  test('a product changed through the API while a step builds it ends with the newer document', async () => {
    const seen = await renamedDuringAStep(
      ['Oskerine Vallow', 'Dunmarrow Pibble', 'Caldrith'],
      'Dunmarrow Quiffet',
      'api',
    )
    expect(seen).toEqual({ product: 'Dunmarrow Quiffet', document: 'dunmarrow quiffet caldrith b', marks: 0 })
  })

  test('a step skips a product a writer holds and marks it again; the next step builds it', async () => {
    const [, product] = await twoProducts('Sarnoway Tindle', 'Velkmore Ashpan', 'Drummick')
    // a writer holds the product (it is changing it and will mark it once more, or not at all), from
    // before its mark: a drain of another test file's (told `now`, in the same database) that ran
    // between the mark and the writer's lock built the product and left no mark to skip
    await holder.query('begin')
    await holder.query(`update products set product_name = 'Velkmore Brisket' where id = $1`, [product])
    await markHeld([product])
    expect(await drainSearchMarks(1, { now: true })).toBe(0)
    // skipped, not waited for: still marked, its document as it was
    expect(await marksOf(product)).toBe(1)
    expect(await documentText(product)).toBe('velkmore ashpan drummick b')
    // the writer commits without marking it (a mark is its job): the mark made again builds it
    await holder.query('commit')
    await drainSearchMarks(1, { now: true })
    // the job the skipping drain sent (a second later) may be the one that builds it
    await eventually(async () => (await marksOf(product)) === 0, 20_000, 'the mark drained')
    expect({ document: await documentText(product), marks: await marksOf(product) }).toEqual({
      document: 'velkmore brisket drummick b',
      marks: 0,
    })
  })
})
