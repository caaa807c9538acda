// A worker process for the outbox crash test: two consumers that record each event they see in
// test_event_log, inside their own transaction. With EMIT=n it first emits n events concurrently
// (each in its own transaction) and prints "emitted".
import { sql } from 'drizzle-orm'
import * as jobs from '../../jobs'
import { config } from '../../src/config'
import { transaction } from '../../src/db/tx'
import { onEvent } from '../../src/events/consumers'
import { emit } from '../../src/events/outbox'
import { openDatabase, startBackground } from '../../src/runtime'

for (const name of ['crash.a', 'crash.b'])
  onEvent(name, ['product.recalled'], async (tx, event) => {
    await tx.execute(sql`insert into test_event_log (consumer, event_id) values (${name}, ${event.id})`)
  })

const database = await openDatabase(config)
await startBackground(config, database.url, jobs, true)
console.log('ready')
const count = Number(process.env.EMIT ?? 0)
if (count > 0) {
  const subject = crypto.randomUUID()
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      transaction((tx) =>
        emit(tx, { eventType: 'product.recalled', organizationId: null, subjectId: subject, data: { i } }),
      ),
    ),
  )
  console.log('emitted')
}
