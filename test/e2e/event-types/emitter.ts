// Type-checked by test/e2e/type-checks.test.ts: emitters and subscribers against the event map
// (src/events/types.ts). Each `@ts-expect-error` line is a payload mismatch tsc must catch.
import type { Tx } from '../../../src/db/tx'
import { emit } from '../../../src/events/outbox'
import { subscriberQueue } from '../../../src/events/queues'
import { subscriber } from '../../../src/events/subscribers'
import type { NewEvent } from '../../../src/events/types'

export async function emitters(tx: Tx, run: NewEvent<'feed_run.completed'>['data']) {
  // the run resource as the API returns it: accepted
  await emit(tx, { eventType: 'feed_run.completed', organizationId: null, subjectId: 'x', data: run })
  await emit(tx, {
    eventType: 'webhook.test',
    organizationId: null,
    subjectId: 'x',
    data: { endpoint_id: 'e', message: 'm' },
  })
  // a product event carrying a run: the payload is not a product resource
  // @ts-expect-error
  await emit(tx, { eventType: 'product.updated', organizationId: null, subjectId: 'x', data: run })
  // a test event missing its message
  // @ts-expect-error
  await emit(tx, { eventType: 'webhook.test', organizationId: null, subjectId: 'x', data: { endpoint_id: 'e' } })
}

export const runs = subscriber({
  queue: subscriberQueue('test.runs'),
  events: ['feed_run.completed', 'feed_run.failed'],
  handle: async (_tx, events) => {
    for (const e of events) {
      const counted: string = e.data.status
      // a run has no GTIN: a subscriber reading one fails tsc
      // @ts-expect-error
      const gtin: string = e.data.gtin
      void counted
      void gtin
    }
  },
})
