import { afterAll, describe, expect, test } from 'bun:test'
import { boss } from '../../../src/db/boss'
import { db } from '../../../src/db/client'
import { createQueue, defineQueue } from '../../../src/db/queues'
import { bind, startWorker } from '../../../src/runtime'
import { eventually } from '../../support/eventually'

// fetchAgainAtOnce (src/runtime/start-workers.ts): after a batch that succeeded, its worker fetches
// again at once instead of waiting out its poll; after one that failed, it waits the poll as before.
// The queues here poll every 30 s: what comes sooner than that came by the worker's own fetch.

const POLL = { pollingIntervalSeconds: 30, localConcurrency: 1 }
const stops: string[] = []
afterAll(async () => {
  for (const name of stops) await boss!.offWork(name)
})

/** A queue holding jobs 1..`jobs`, then its worker started (its first fetch, at start, finds them). */
async function queueWith(name: string, jobs: number, handle: () => Promise<void>, fetchAgainAtOnce: boolean) {
  const queue = defineQueue<{ n: number }>(`test.fetch-again.${name}.${crypto.randomUUID().slice(0, 8)}`, {
    retryLimit: 3,
    retryDelay: 0,
  })
  await createQueue(queue)
  for (let n = 1; n <= jobs; n++) await queue.send(db, { n })
  const handled: number[] = []
  await startWorker(
    boss!,
    bind(
      queue,
      async (jobs) => {
        for (const job of jobs) handled.push(job.data.n)
        await handle()
      },
      { fetchAgainAtOnce, work: POLL },
    ),
  )
  stops.push(queue.name)
  return { queue, handled }
}

describe('fetchAgainAtOnce', () => {
  test('five queued jobs of a worker polling every 30 s are all done by its own fetches', async () => {
    const { handled } = await queueWith('runs', 5, async () => {}, true)
    // waiting out the poll, the fifth would come two minutes after the first
    await eventually(async () => (handled.length === 5 ? true : null), 20_000)
    expect(handled.toSorted()).toEqual([1, 2, 3, 4, 5])
  }, 60_000)

  test('a batch that failed waits out the poll before its retry (failures are not fetched at once)', async () => {
    const { handled } = await queueWith(
      'fails',
      1,
      async () => {
        throw new Error('always')
      },
      true,
    )
    await eventually(async () => (handled.length >= 1 ? true : null), 20_000)
    // retried at once, the job's 3 retries (no delay) would be spent within a second
    await Bun.sleep(3000)
    expect(handled).toEqual([1])
  }, 60_000)
})
