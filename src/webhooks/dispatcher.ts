import { config } from '../config'
import { listener } from '../db/listener'
import { logger } from '../shared/logger'
import { attemptDelivery } from './attempts'
import { type Claim, type ClaimRow, toClaim } from './claims'
import { DUE_CHANNEL } from './deliveries'
import { inOneRoundTrip, numeral } from './round-trip'

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
 * delivery is leased (`lease_until`); a worker that dies mid-attempt leaves it to be claimed again
 * once its lease has passed, as pg-boss's heartbeat did.
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
 * Only endpoints with scheduled deliveries are visited (a skip scan of the scheduled index), and
 * of each at most its free slots are read: an endpoint whose circuit is open costs one index probe
 * however many deliveries wait for it. A switched-off or deleted endpoint's leftover gets a slot
 * so its attempt can park or cancel it.
 *
 * The lock and the claim go in one round trip (round-trip.ts): the lock is held to the end of that
 * transaction, and the claim, a statement after it, sees what the previous holder committed.
 */
export async function claimDeliveries(limit: number, shares: Shares): Promise<Claim[]> {
  const rows = await inOneRoundTrip<ClaimRow>(`select pg_advisory_xact_lock(${CLAIM_LOCK})`, {
    name: 'webhook_claim',
    types: ['int', 'int', 'int', 'int', 'float8'],
    text: CLAIM,
    args: [
      shares.circuitFailures,
      shares.endpointConcurrency,
      shares.organizationConcurrency,
      limit,
      shares.leaseSeconds,
    ].map(numeral),
  })
  return rows.map(toClaim)
}

/** The claim (claimDeliveries): $1 circuit failures, $2 endpoint and $3 organization concurrency, $4 limit, $5 lease seconds. */
const CLAIM = `
    with recursive scheduled(endpoint_id) as (
      -- ordered as webhook_deliveries_scheduled_idx is, so the planner walks that small index and
      -- never the settled deliveries
      (select endpoint_id from webhook_deliveries where job_token is not null
       order by endpoint_id, next_attempt_at limit 1)
      union all
      select (select d.endpoint_id from webhook_deliveries d
              where d.job_token is not null and d.endpoint_id > s.endpoint_id
              order by d.endpoint_id, d.next_attempt_at limit 1)
      from scheduled s where s.endpoint_id is not null
    ),
    busy as materialized (
      select endpoint_id, organization_id, count(*)::int as n
      from webhook_deliveries where lease_until > now()
      group by endpoint_id, organization_id
    ),
    organization_busy as materialized (
      select organization_id, sum(n)::int as n from busy group by organization_id
    ),
    endpoint_free as (
      select e.id,
        (case
          when not e.is_active or e.deleted_at is not null then 1
          when e.consecutive_failures < $1 then $2
          when e.circuit_open_until is null or e.circuit_open_until <= now() then 1
          else 0
        end) - coalesce(b.n, 0) as free
      from scheduled s
      join webhook_endpoints e on e.id = s.endpoint_id
      left join busy b on b.endpoint_id = e.id
    ),
    candidates as (
      select c.id, c.organization_id, c.next_attempt_at,
        row_number() over (partition by c.organization_id order by c.endpoint_rank, c.next_attempt_at) as rank
      from endpoint_free f
      cross join lateral (
        select d.id, d.organization_id, d.next_attempt_at,
          row_number() over (order by d.next_attempt_at) as endpoint_rank
        from webhook_deliveries d
        where d.endpoint_id = f.id and d.job_token is not null and d.next_attempt_at <= now()
          and (d.lease_until is null or d.lease_until <= now())
        order by d.next_attempt_at
        -- free is negative when a circuit opened over attempts already in flight; a negative
        -- LIMIT is an error, and only the planner's choice keeps the filter below from running first
        limit greatest(f.free, 0)
      ) c
      where f.free > 0
    ),
    chosen as (
      select c.id from candidates c
      left join organization_busy o on o.organization_id = c.organization_id
      where c.rank <= $3 - coalesce(o.n, 0)
      order by c.rank, c.next_attempt_at
      limit $4
    ),
    claimed as (
      update webhook_deliveries d
      set job_token = gen_random_uuid(), lease_until = now() + make_interval(secs => $5)
      from chosen where d.id = chosen.id
      returning d.id, d.job_token, d.attempts, d.endpoint_id, d.event_id
    )
    select c.id, c.job_token, c.attempts,
      e.id as endpoint_id, e.url, e.signing_secret, e.previous_secret, e.rotated_at, e.is_active,
      e.deleted_at is not null as deleted,
      v.id as event_id, v.event_type, v.created as event_created, v.organization_id, v.subject_id, v.data,
      v.trace_parent
    from claimed c
    join webhook_endpoints e on e.id = c.endpoint_id
    join events v on v.id = c.event_id`

const IDLE_POLL_MS = 200
const ERROR_PAUSE_MS = 1000

/**
 * Starts this process's dispatcher: it claims whenever it has free slots and something may be
 * due (an attempt settled, a commit announced deliveries on DUE_CHANNEL, or every 200 ms for
 * retries coming due). The returned function stops claiming and waits for the attempts in flight.
 */
export function startDispatcher(
  shares: Shares = sharesFromConfig(),
  attempt: (claim: Claim) => Promise<void> = attemptDelivery,
): () => Promise<void> {
  const running = new Set<Promise<void>>()
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

  const run = (claim: Claim) => {
    const settled: Promise<void> = attempt(claim)
      // the lease stays: the delivery is claimed again once it has passed
      .catch((err) => logger.error({ err, delivery_id: claim.id }, 'webhook attempt failed; retried after its lease'))
      .finally(() => {
        running.delete(settled)
        poke()
      })
    running.add(settled)
  }

  const loop = (async () => {
    while (!stopped) {
      const free = shares.maxInFlight - running.size
      let claimed = 0
      let failed = false
      if (free > 0) {
        try {
          const claims = await claimDeliveries(free, shares)
          claimed = claims.length
          for (const claim of claims) run(claim)
        } catch (err) {
          failed = true
          if (!stopped) logger.error({ err }, 'claiming webhook deliveries failed; trying again')
        }
      }
      // a full claim means more may be due; otherwise wait for a slot, a commit or the next poll
      if (stopped || (claimed > 0 && claimed === free)) continue
      await nap(failed ? ERROR_PAUSE_MS : IDLE_POLL_MS)
    }
  })()

  return async () => {
    stopped = true
    wake?.()
    await loop
    await Promise.allSettled(running)
  }
}
