// A worker process for the outbox crash test: the service's features plus two subscribers that
// record each event they see in test_event_log, inside their own transaction. With EMIT=n it first
// emits n events concurrently (each in its own transaction) and prints "emitted".
import { sql } from 'drizzle-orm'
import { config } from '../../src/config'
import { transaction } from '../../src/db/tx'
import { emit } from '../../src/events/outbox'
import { subscriberQueue } from '../../src/events/queues'
import { subscriber } from '../../src/events/subscribers'
import { features } from '../../src/features'
import { openDatabase, startBackground } from '../../src/runtime'
import { defineFeature } from '../../src/runtime/feature'

const crash = defineFeature({
  name: 'crash',
  subscribers: ['crash.a', 'crash.b'].map((name) =>
    subscriber({
      queue: subscriberQueue(name),
      events: ['webhook.test'],
      handle: async (tx, events) => {
        for (const event of events)
          await tx.execute(sql`insert into test_event_log (consumer, event_id) values (${name}, ${event.id})`)
      },
    }),
  ),
})

const database = await openDatabase(config)
await startBackground(config, database.url, [...features, crash], true)
console.log('ready')
const count = Number(process.env.EMIT ?? 0)
if (count > 0) {
  const subject = crypto.randomUUID()
  // 64 transactions in flight at once (four times the pool): concurrent enough for every race with
  // the dispatcher, without a thousand waiting on the pool's connect timeout (5 s), which a loaded
  // machine exceeded (the emits failed and "emitted" never came)
  let next = 0
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < count; i = next++)
        await transaction((tx) =>
          emit(tx, {
            eventType: 'webhook.test',
            organizationId: null,
            subjectId: subject,
            data: { endpoint_id: subject, message: String(i) },
          }),
        )
    }),
  )
  console.log('emitted')
}
