import { sql } from 'drizzle-orm'
import { listener } from '../db/listener'
import { afterCommit, type Executor } from '../db/tx'

export const REPORTS_CHANNEL = 'advertising_reports'
const MAX_ORGANIZATIONS = 10_000

type Entry = { list?: string; summaries: Map<string, string> }

/**
 * Serialized report bodies (spec #6 summaries, the spec #9 list) by organization, so a report read
 * costs no database round trip. A change to an organization's campaigns or totals drops its
 * entry: at once in the process that committed it (a commit hook) and, through NOTIFY on the
 * shared listener, in every other process. A read stores its body only if no drop happened while
 * it ran (a generation per organization), and only while the listener is up: without it, changes
 * could be missed, so the cache is bypassed, never trusted.
 */
class ReportCache {
  #entries = new Map<string, Entry>()
  /** the clock reading of each organization's last drop, and of the last listener change */
  #drops = new Map<string, number>()
  #floor = 0
  #clock = 0
  #listening = false

  listen() {
    return listener.on(REPORTS_CHANNEL, {
      onMessage: (organizationId) => this.drop(organizationId),
      onListening: (on) => {
        this.#listening = on
        this.#entries.clear()
        this.#floor = ++this.#clock
      },
    })
  }

  /** A mark to pass to `store…` for a read about to start. */
  generation(organizationId: string): number {
    return Math.max(this.#floor, this.#drops.get(organizationId) ?? 0)
  }

  list(organizationId: string): string | undefined {
    return this.#listening ? this.#entries.get(organizationId)?.list : undefined
  }

  summary(organizationId: string, campaignId: string): string | undefined {
    return this.#listening ? this.#entries.get(organizationId)?.summaries.get(campaignId) : undefined
  }

  storeList(organizationId: string, generation: number, body: string) {
    const entry = this.#entry(organizationId, generation)
    if (entry) entry.list = body
  }

  storeSummary(organizationId: string, generation: number, campaignId: string, body: string) {
    this.#entry(organizationId, generation)?.summaries.set(campaignId, body)
  }

  drop(organizationId: string) {
    this.#entries.delete(organizationId)
    this.#drops.set(organizationId, ++this.#clock)
  }

  #entry(organizationId: string, generation: number): Entry | null {
    if (!this.#listening || generation !== this.generation(organizationId)) return null
    let entry = this.#entries.get(organizationId)
    if (!entry) {
      if (this.#entries.size >= MAX_ORGANIZATIONS) this.#entries.delete(this.#entries.keys().next().value!)
      entry = { summaries: new Map() }
      this.#entries.set(organizationId, entry)
    }
    return entry
  }
}

export const reportCache = new ReportCache()

/**
 * Says that an organization's reports change with the executor's transaction: every process drops
 * its cached bodies when it commits (NOTIFY is sent on commit, and a rolled-back change sends none).
 */
export async function reportsChanged(ex: Executor, organizationId: string) {
  await ex.execute(sql`select pg_notify(${REPORTS_CHANNEL}, ${organizationId})`)
  afterCommit(ex, () => reportCache.drop(organizationId))
}
