import { literal, type Prepared } from './round-trip'

/**
 * A successful attempt, to be settled (attempts.ts makes it, the dispatcher settles it). Successes
 * settle in batches, one batch at a time beside the claims: those that finish while a batch is being
 * written go in the next one, so a burst settles in few statements and a lone success waits for no
 * timer. A statement per delivery cost more than the POST.
 */
export type Success = {
  deliveryId: string
  endpointId: string
  slot: number
  token: string
  attempt: number
  status: number
  latencyMs: number
  at: Date
}

/**
 * Settles successes, given as one array per column ($1 delivery ids, $2 endpoint ids, $3 slots,
 * $4 tokens, $5 attempts, $6 statuses, $7 latencies, $8 times): each frees its endpoint's slot if
 * its token is still the slot's, leaves the schedule, and is recorded on the delivery's row; the
 * circuits of their endpoints close. The schedule rows and the deliveries are each read by one scan
 * of their primary key for `= any(ids)`, the ids an array computed once (an InitPlan), so the plan
 * is that scan whatever the tables' size when it was made: joined to the input, whose size the plan
 * cannot know, a table of tens of thousands of deliveries was read whole for every batch; joined
 * to it with `= any` as well, each row's probe sorted the whole array again (a batch of 100 took
 * 3.2 ms in EXPLAIN ANALYZE, 1.5 ms with these scans).
 *
 * The successful attempt is recorded on the delivery's own row (its number, time, status and
 * latency), not as a row of webhook_attempts, which keeps the failed ones: the attempt log reads
 * both (deliveries.ts). None of those columns is indexed, so the row is updated in place (HOT).
 * A success closes its endpoint's circuit, decided by the endpoint row as it is now, not as it was
 * when the attempt started (other attempts may have failed and opened it meanwhile); a healthy
 * endpoint's row is not written.
 */
const SETTLE = `
  with input as (
    select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::uuid[], $5::int[], $6::int[], $7::int[], $8::timestamptz[])
      as x(delivery_id, endpoint_id, slot, token, attempt, status, latency_ms, at)),
  released as (
    update webhook_leases l set delivery_id = null, token = null, lease_until = null
    from input i where l.endpoint_id = i.endpoint_id and l.slot = i.slot and l.token = i.token
    returning i.delivery_id, i.attempt, i.status, i.latency_ms, i.at),
  -- the released ones, once: their ids as an array, and what to record of each by its id (jsonb:
  -- a lookup by key is a binary search)
  freed as (
    select array_agg(delivery_id) as ids,
      jsonb_object_agg(delivery_id, jsonb_build_array(attempt, status, latency_ms, at)) as outcome
    from released),
  unscheduled as (
    delete from webhook_pending_deliveries p where p.delivery_id = any((select ids from freed)::uuid[])),
  settled as (
    update webhook_deliveries d set status = 'succeeded',
      attempts = ((select outcome from freed) -> d.id::text ->> 0)::int,
      response_status = ((select outcome from freed) -> d.id::text ->> 1)::int,
      latency_ms = ((select outcome from freed) -> d.id::text ->> 2)::int,
      last_attempt_at = ((select outcome from freed) -> d.id::text ->> 3)::timestamptz
    where d.id = any((select ids from freed)::uuid[])
    returning d.id),
  closed as (
    update webhook_endpoints e set failing_since = null, consecutive_failures = 0, circuit_open_until = null
    where e.id = any($2::uuid[])
      and (e.consecutive_failures > 0 or e.circuit_open_until is not null or e.failing_since is not null))
  select count(*) from settled`

/**
 * The settle of `list` as a statement for round-trip.ts (its arrays written into the statement's
 * text); the dispatcher sends it with the next claim (dispatcher.ts).
 */
export function settleStatement(list: Success[]): Prepared {
  const column = (value: (s: Success) => string | number) => literal(`{${list.map(value).join(',')}}`)
  return {
    name: 'webhook_settle',
    types: ['uuid[]', 'uuid[]', 'int[]', 'uuid[]', 'int[]', 'int[]', 'int[]', 'timestamptz[]'],
    text: SETTLE,
    args: [
      column((s) => s.deliveryId),
      column((s) => s.endpointId),
      column((s) => s.slot),
      column((s) => s.token),
      column((s) => s.attempt),
      column((s) => s.status),
      column((s) => s.latencyMs),
      column((s) => s.at.toISOString()),
    ],
  }
}
