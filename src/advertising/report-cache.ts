import { sql } from 'drizzle-orm'
import { listener } from '../db/listener'
import { afterCommit, type Executor } from '../db/tx'

export const REPORTS_CHANNEL = 'advertising_reports'
const MAX_ORGANIZATIONS = 10_000
/**
 * Names this process in its announcements (`<organization id>:<sender>`). Its own come back through
 * the listener some moments after it dropped the entry at commit; dropping again then would throw
 * away a body read after the commit, fresh, for nothing. A payload without a sender (a NOTIFY sent
 * by hand, or by a process of an earlier version) drops the entry.
 */
const SENDER = crypto.randomUUID()
/** The NOTIFY payload this process sends when an organization's reports change. */
export const announcement = (organizationId: string) => `${organizationId}:${SENDER}`

/**
 * Serialized report bodies (spec #6 summaries, the spec #9 list) by organization, so a report read
 * costs no database round trip. A change to an organization's campaigns or totals drops its
 * entry: at once in the process that committed it (a commit hook) and, through NOTIFY on the
 * shared listener, in every other process. A read stores its body only if no drop happened while
 * it ran (a generation per organization), and only while the listener is up: without it, changes
 * could be missed, so the cache is bypassed, never trusted.
 */
class ReportCache {
  /** per organization: body by report key (`list`, `summary:<campaign id>`) */
  #entries = new Map<string, Map<string, string>>()
  /** the clock reading of each organization's last drop, and of the last listener change */
  #drops = new Map<string, number>()
  #floor = 0
  #clock = 0
  #listening = false

  listen() {
    return listener.on(REPORTS_CHANNEL, {
      onMessage: (payload) => {
        const [organizationId, sender] = payload.split(':')
        if (sender !== SENDER) this.drop(organizationId!)
      },
      onListening: (on) => {
        this.#listening = on
        this.#entries.clear()
        this.#floor = ++this.#clock
      },
    })
  }

  /** A mark to pass to `store` for a read about to start. */
  generation(organizationId: string): number {
    return Math.max(this.#floor, this.#drops.get(organizationId) ?? 0)
  }

  get(organizationId: string, key: string): string | undefined {
    return this.#listening ? this.#entries.get(organizationId)?.get(key) : undefined
  }

  /** Keeps a body read since `generation` was taken, unless a drop came in between (or nothing listens). */
  store(organizationId: string, generation: number, key: string, body: string) {
    if (!this.#listening || generation !== this.generation(organizationId)) return
    let entry = this.#entries.get(organizationId)
    if (!entry) {
      if (this.#entries.size >= MAX_ORGANIZATIONS) this.#entries.delete(this.#entries.keys().next().value!)
      entry = new Map()
      this.#entries.set(organizationId, entry)
    }
    entry.set(key, body)
  }

  /** A report's JSON body: cached, or computed and kept. */
  async body(organizationId: string, key: string, compute: () => Promise<unknown>): Promise<string> {
    const cached = this.get(organizationId, key)
    if (cached !== undefined) return cached
    const generation = this.generation(organizationId)
    const body = JSON.stringify(await compute())
    this.store(organizationId, generation, key, body)
    return body
  }

  drop(organizationId: string) {
    this.#entries.delete(organizationId)
    this.#drops.set(organizationId, ++this.#clock)
  }
}

export const reportCache = new ReportCache()

/**
 * Says that an organization's reports change with the executor's transaction: every process drops
 * its cached bodies when it commits (NOTIFY is sent on commit, and a rolled-back change sends none).
 */
export async function reportsChanged(ex: Executor, organizationId: string) {
  await ex.execute(sql`select pg_notify(${REPORTS_CHANNEL}, ${announcement(organizationId)})`)
  afterCommit(ex, () => reportCache.drop(organizationId))
}
