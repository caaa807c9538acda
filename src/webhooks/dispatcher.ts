import { config } from '../config'
import { listener } from '../db/listener'
import { logger } from '../shared/logger'
import { attemptDelivery } from './attempts'
import { type Claim, type ClaimRow, toClaim } from './claims'
import { DUE_CHANNEL } from './deliveries'
import { inOneRoundTrip, inTransactionsOfOneRoundTrip, numeral, type Prepared } from './round-trip'
import { type Success, settleStatement } from './successes'

/**
 * The webhook dispatcher: each worker process claims due deliveries from `webhook_deliveries`
 * and runs their attempts, each settled on its own so a slow receiver holds only its own slot.
 *
 * Why not one pg-boss job per attempt (as before): pg-boss fetches in creation order, so one
 * organization's 37,525 queued deliveries to receivers that never answer stood in front of every
 * other organization's, and with enough endpoints they took every slot. The claim here is fair:
 * - an endpoint has at most `endpointConcurrency` attempts in flight, 1 (a probe) once its circuit
 *   breaker is open and its open interval has passed, none before (circuit.ts);
 * - an organization has at most `organizationConcurrency` in flight, across every process;
 * - the slots left are dealt round-robin: every organization's first due delivery before any
 *   organization's second, and inside one organization every endpoint's first before any second.
 * Claims run one at a time across processes (an advisory lock), so the shares are exact. A claimed
 * delivery is leased: it takes one of its endpoint's slots in `webhook_leases` until `lease_until`;
 * a worker that dies mid-attempt leaves it to be claimed again once its lease has passed, as
 * pg-boss's heartbeat did. The claim writes only that slot (in place): the delivery's own row is
 * written when it settles.
 */
export type Shares = {
  /** attempts this process has in flight at once */
  maxInFlight: number
  endpointConcurrency: number
  organizationConcurrency: number
  circuitFailures: number
  /** longer than an attempt can take: its timeout, and time to record the outcome */
  leaseSeconds: number
}

export const sharesFromConfig = (): Shares => ({
  maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
  endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
  organizationConcurrency:
    config.WEBHOOK_ORGANIZATION_CONCURRENCY ?? Math.max(1, Math.floor(config.WEBHOOK_MAX_IN_FLIGHT / 4)),
  circuitFailures: config.WEBHOOK_CIRCUIT_FAILURES,
  leaseSeconds: config.WEBHOOK_TIMEOUT_SECONDS + 10,
})

const CLAIM_LOCK = 727_044 // advisory lock id: one claim at a time across worker processes

/**
 * Claims up to `limit` due deliveries fairly (see above) and leases them; each gets a new token,
 * so an attempt of an earlier claim whose lease lapsed records nothing. Each claim comes with its
 * endpoint and its event, read in the same statement.
 *
 * Only endpoints with scheduled deliveries are visited (a skip scan of the schedule's index, from
 * the highest endpoint down), and of each at most its free slots are read: an endpoint whose
 * circuit is open costs one index probe however many deliveries wait for it. A switched-off or
 * deleted endpoint's leftover gets a slot so its attempt can park or cancel it.
 *
 * The lock and the claim go in one round trip (round-trip.ts): the lock is held to the end of that
 * transaction, and the claim, a statement after it, sees what the previous holder committed.
 */
export async function claimDeliveries(limit: number, shares: Shares): Promise<Claim[]> {
  const rows = await inOneRoundTrip<ClaimRow>(...claimStatements(limit, shares))
  return rows.map(toClaim)
}

/** The claim's lock and statement (claimDeliveries), for round-trip.ts. */
const claimStatements = (limit: number, shares: Shares): [string, Prepared] => [
  `select pg_advisory_xact_lock(${CLAIM_LOCK})`,
  {
    name: 'webhook_claim',
    types: ['int', 'int', 'int', 'int', 'float8'],
    text: CLAIM_TEXT,
    args: [
      shares.circuitFailures,
      shares.endpointConcurrency,
      shares.organizationConcurrency,
      limit,
      shares.leaseSeconds,
    ].map(numeral),
  },
]

/**
 * Settles `successes` and then, in the same round trip but a transaction of its own, claims up to
 * `limit` (none when 0): the settle commits (freeing its slots) before the claim waits for the
 * claim lock, so the settle holds nothing while it waits, and the slots it freed are taken again
 * without a second round trip. A claim of its own after each settle cost a round trip, a wake-up
 * of the claimer and the claim lock's wait per batch.
 */
export async function settleAndClaim(successes: Success[], limit: number, shares: Shares): Promise<Claim[]> {
  if (limit <= 0) {
    await inOneRoundTrip(settleStatement(successes))
    return []
  }
  const [, claimed] = await inTransactionsOfOneRoundTrip<ClaimRow>(
    [settleStatement(successes)],
    claimStatements(limit, shares),
  )
  return claimed!.map(toClaim)
}

/** The claim (claimDeliveries): $1 circuit failures, $2 endpoint and $3 organization concurrency, $4 limit, $5 lease seconds. */
const CLAIM_TEXT = `
    with recursive scheduled(endpoint_id) as (
      -- ordered as webhook_pending_deliveries_endpoint_idx is, backwards, so the planner walks that
      -- small index from each endpoint's latest entry: its earliest are those of deliveries settled
      -- (deleted) since the last vacuum, and walked forwards the index-only scan visited each one's
      -- heap row (3,010 heap fetches in a claim after 5,000 settled, 10 backwards)
      (select endpoint_id from webhook_pending_deliveries where next_attempt_at is not null
       order by endpoint_id desc, next_attempt_at desc limit 1)
      union all
      select (select p.endpoint_id from webhook_pending_deliveries p
              where p.next_attempt_at is not null and p.endpoint_id < s.endpoint_id
              order by p.endpoint_id desc, p.next_attempt_at desc limit 1)
      from scheduled s where s.endpoint_id is not null
    ),
    endpoint_capped as (
      select e.id, e.organization_id, l.slots, l.deliveries,
        (case
          when not e.is_active or e.deleted_at is not null then 1
          when e.consecutive_failures < $1 then $2
          when e.circuit_open_until is null or e.circuit_open_until <= now() then 1
          else 0
        end) as cap
      from scheduled s
      join webhook_endpoints e on e.id = s.endpoint_id
      -- its slots in use: a few rows of the leases' primary key
      cross join lateral (
        select coalesce(array_agg(l.slot), '{}') as slots, coalesce(array_agg(l.delivery_id), '{}') as deliveries
        from webhook_leases l where l.endpoint_id = e.id and l.lease_until > now()
      ) l
    ),
    -- and the numbers of its free slots, lowest first: its k-th chosen delivery takes the k-th
    endpoint_free as materialized (
      select f.*, array(select n from generate_series(0, f.cap - 1 + cardinality(f.slots)) n
                        where n <> all(f.slots) order by n) as free_slots
      from endpoint_capped f
    ),
    organization_busy as materialized (
      select l.organization_id, count(*)::int as n from webhook_leases l
      where l.organization_id in (select organization_id from endpoint_free) and l.lease_until > now()
      group by l.organization_id
    ),
    candidates as (
      select c.delivery_id, c.endpoint_id, c.organization_id, c.event_id, c.attempts, c.next_attempt_at,
        c.endpoint_rank, f.slots, f.cap, f.free_slots,
        row_number() over (partition by c.organization_id order by c.endpoint_rank, c.next_attempt_at) as rank
      from endpoint_free f
      cross join lateral (
        select p.delivery_id, p.endpoint_id, p.organization_id, p.event_id, p.attempts, p.next_attempt_at,
          row_number() over (order by p.next_attempt_at) as endpoint_rank
        from webhook_pending_deliveries p
        where p.endpoint_id = f.id and p.next_attempt_at <= now() and p.delivery_id <> all(f.deliveries)
        order by p.next_attempt_at
        -- free is negative when a circuit opened over attempts already in flight; a negative
        -- LIMIT is an error, and only the planner's choice keeps the filter below from running first
        limit greatest(f.cap - cardinality(f.slots), 0)
      ) c
      where f.cap > cardinality(f.slots)
    ),
    chosen as (
      select c.*, row_number() over (partition by c.endpoint_id order by c.endpoint_rank) as k
      from (
        select c.* from candidates c
        left join organization_busy o on o.organization_id = c.organization_id
        where c.rank <= $3 - coalesce(o.n, 0)
        order by c.rank, c.next_attempt_at
        limit $4
      ) c
    ),
    -- an endpoint's k-th chosen delivery takes its k-th free slot (a subquery per delivery cost a
    -- third of the claim)
    leased as (
      insert into webhook_leases as l (endpoint_id, slot, organization_id, delivery_id, token, lease_until)
      select c.endpoint_id, c.free_slots[c.k], c.organization_id, c.delivery_id, gen_random_uuid(),
        now() + make_interval(secs => $5)
      from chosen c
      on conflict (endpoint_id, slot) do update
        set delivery_id = excluded.delivery_id, token = excluded.token, lease_until = excluded.lease_until
        where l.lease_until is null or l.lease_until <= now()
      returning l.delivery_id, l.slot, l.token
    )
    select c.delivery_id as id, l.slot, l.token as job_token, c.attempts,
      e.id as endpoint_id, e.url, e.signing_secret, e.previous_secret, e.rotated_at, e.is_active,
      e.deleted_at is not null as deleted,
      -- epoch milliseconds: parsing PostgreSQL's text form of a time cost the service more than the
      -- rest of the row's fields together
      v.id as event_id, v.event_type, (extract(epoch from v.created) * 1000)::float8 as event_created,
      v.organization_id, v.subject_id, v.data,
      v.trace_parent
    from leased l
    join chosen c on c.delivery_id = l.delivery_id
    join webhook_endpoints e on e.id = c.endpoint_id
    -- each event by its primary key: joined, the plan counted on a claim of 100 and read the whole
    -- events table once it was small enough (tens of thousands of rows, a millisecond a claim)
    cross join lateral (select * from events v where v.id = c.event_id limit 1) v`

const IDLE_POLL_MS = 200
const ERROR_PAUSE_MS = 1000

/**
 * Starts this process's dispatcher: it claims whenever it has free slots and something may be
 * due (an attempt settled, a commit announced deliveries on DUE_CHANNEL, or every 200 ms for
 * retries coming due). The returned function stops claiming and waits for the attempts in flight.
 */
export function startDispatcher(
  shares: Shares = sharesFromConfig(),
  attempt: (claim: Claim) => Promise<Success | null> = attemptDelivery,
): () => Promise<void> {
  const running = new Set<Promise<void>>()
  /** successes not yet settled, and the settling of those before them */
  let successes: Success[] = []
  let settling: Promise<void> | null = null
  let stopped = false
  let poked = false
  let wake: (() => void) | null = null
  const poke = () => {
    poked = true
    wake?.()
  }
  const nap = (ms: number) =>
    new Promise<void>((done) => {
      if (poked || stopped) return done()
      const timer = setTimeout(done, ms)
      wake = () => {
        clearTimeout(timer)
        done()
      }
    }).finally(() => {
      wake = null
      poked = false
    })
  void listener.on(DUE_CHANNEL, { onMessage: poke })

  /**
   * Attempts this process may still start: its share less those running and those a claim in
   * progress may return (the claimer's and the settler's claims run side by side).
   */
  let reserved = 0
  const free = () => shares.maxInFlight - running.size - reserved

  /**
   * Settles the successes that finished while the previous batch was being settled, one batch at a
   * time beside the claimer's claims (another connection), each with a claim of the slots it frees
   * (settleAndClaim). A claim that came back full pokes the claimer: more may be due.
   */
  const settle = (): Promise<void> => {
    if (settling || successes.length === 0) return settling ?? Promise.resolve()
    settling = (async () => {
      try {
        while (successes.length) {
          const batch = successes
          successes = []
          const limit = stopped ? 0 : Math.max(0, free())
          reserved += limit
          let claims: Claim[] = []
          let failed = false
          try {
            claims = await settleAndClaim(batch, limit, shares)
          } catch (err) {
            failed = true
            // the settle's transaction may or may not have committed: if not, their leases lapse
            // and they are sent again; the claim's is not kept either way
            logger.error(
              { err, unsettled: batch.length },
              'settling webhook deliveries (or the claim after it) failed; any not settled are sent again after their lease',
            )
          } finally {
            reserved -= limit
          }
          for (const claim of claims) run(claim)
          if (failed || limit === 0 || claims.length === limit) poke()
        }
      } finally {
        // in the same turn as the check above: a success pushed after it starts a new settling
        settling = null
      }
    })()
    return settling
  }

  const run = (claim: Claim) => {
    const settled: Promise<void> = attempt(claim)
      .then((success) => {
        if (!success) return poke()
        successes.push(success)
        void settle()
      })
      .catch((err) => {
        // the lease stays: the delivery is claimed again once it has passed
        logger.error({ err, delivery_id: claim.id }, 'webhook attempt failed; retried after its lease')
        poke()
      })
      .finally(() => running.delete(settled))
    running.add(settled)
  }

  const loop = (async () => {
    while (!stopped) {
      const limit = free()
      let claimed = 0
      let failed = false
      if (limit > 0) {
        reserved += limit
        try {
          const claims = await claimDeliveries(limit, shares)
          claimed = claims.length
          reserved -= limit
          for (const claim of claims) run(claim)
        } catch (err) {
          reserved -= limit
          failed = true
          if (!stopped) logger.error({ err }, 'claiming webhook deliveries failed; trying again')
        }
      }
      // a full claim means more may be due; otherwise wait for a settlement, a commit or the next poll
      if (stopped || (claimed > 0 && claimed === limit)) continue
      await nap(failed ? ERROR_PAUSE_MS : IDLE_POLL_MS)
    }
  })()

  return async () => {
    stopped = true
    wake?.()
    await loop
    // the attempts in flight, the settling of their successes, and the attempts of a claim that a
    // settle made before it saw the stop (a settle after the stop claims nothing)
    while (running.size > 0 || settling) {
      await Promise.allSettled([...running])
      await settle()
    }
  }
}
