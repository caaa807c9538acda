import type { resolutionRules } from '../db/schema'
import { parseMmdd, parseTimeOfDay } from './formats'

/** A stored rule (the table's row: conditions.ts is below rules.ts, which compiles rules with it). */
type RuleRow = typeof resolutionRules.$inferSelect

/** A rule as the resolver evaluates it: its conditions parsed once, when the index loads it. */
export type CompiledRule = {
  id: string
  organizationId: string
  scopeType: RuleRow['scopeType']
  /** SERIAL 5, BATCH 4, PRODUCT 3, BRAND 2, ORGANIZATION 1: higher is more specific */
  specificity: number
  scopeId: string
  productId: string | null
  orderIndex: number
  created: number
  startMs: number | null
  endMs: number | null
  annualStart: number | null
  annualEnd: number | null
  /** bit d set for ISO weekday d; 0 means every day */
  days: number
  todStart: number | null
  todEnd: number | null
  timezone: string
  linkType: string
  countries: ReadonlySet<string> | null
  regions: ReadonlySet<string> | null
  cities: ReadonlySet<string> | null
  href: string
  anchor: string
  title: string
  mediaType: string
  hreflang: readonly string[]
}

export const SPECIFICITY = { SERIAL: 5, BATCH: 4, PRODUCT: 3, BRAND: 2, ORGANIZATION: 1 } as const

/**
 * One copy of each value the rules repeat (organization, product and scope ids, time zones, link
 * types, titles, place lists): the index holds tens of thousands of rules, and a resident heap of
 * a few distinct objects instead of a dozen strings a rule keeps garbage collection short (the
 * resolver's p99 is its pauses). Cleared when the index reloads everything.
 */
export class Interner {
  #strings = new Map<string, string>()
  #lists = new Map<string, readonly string[]>()
  #sets = new Map<string, ReadonlySet<string>>()

  string(value: string): string
  string(value: string | null): string | null
  string(value: string | null): string | null {
    if (value === null) return null
    const hit = this.#strings.get(value)
    if (hit !== undefined) return hit
    this.#strings.set(value, value)
    return value
  }

  list(values: string[]): readonly string[] {
    const key = values.join('\u0000')
    const hit = this.#lists.get(key)
    if (hit) return hit
    const list = Object.freeze(values.map((v) => this.string(v)))
    this.#lists.set(key, list)
    return list
  }

  set(values: string[], fold: (s: string) => string): ReadonlySet<string> | null {
    if (!values.length) return null
    const folded = values.map(fold)
    const key = folded.join('\u0000')
    const hit = this.#sets.get(key)
    if (hit) return hit
    const set = new Set(folded.map((v) => this.string(v)))
    this.#sets.set(key, set)
    return set
  }

  clear() {
    this.#strings.clear()
    this.#lists.clear()
    this.#sets.clear()
  }
}

const upper = (s: string) => s.toUpperCase()
const lower = (s: string) => s.toLowerCase()

/** Printable ASCII: what a Location or Link header carries as it is. */
export const HEADER_SAFE = /^[\x21-\x7e]*$/
const utf8 = new TextEncoder()

/** Every character outside printable ASCII as percent-encoded UTF-8 (a lone surrogate as U+FFFD's). */
function percentEncode(text: string): string {
  let out = ''
  for (const char of text) {
    if (HEADER_SAFE.test(char)) out += char
    else for (const byte of utf8.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * A stored target as a Location header can carry it: rules are checked when stored, but a row
 * written before that (an IRI such as `https://ok.example/€`) must not make every scan of its
 * product fail. WHATWG URL's serialisation, or each unsafe character percent-encoded.
 */
export function headerSafeUrl(url: string): string {
  if (HEADER_SAFE.test(url)) return url
  try {
    const href = new URL(url).href
    if (HEADER_SAFE.test(href)) return href
  } catch {}
  return percentEncode(url)
}

export function compileRule(row: RuleRow, shared = new Interner()): CompiledRule {
  return {
    id: row.id,
    organizationId: shared.string(row.organizationId),
    scopeType: row.scopeType,
    specificity: SPECIFICITY[row.scopeType],
    scopeId: shared.string(row.scopeId),
    productId: shared.string(row.productId),
    orderIndex: row.orderIndex,
    created: row.created.getTime(),
    startMs: row.absoluteStartAt?.getTime() ?? null,
    endMs: row.absoluteEndAt?.getTime() ?? null,
    annualStart: row.annualStartMmdd ? parseMmdd(row.annualStartMmdd) : null,
    annualEnd: row.annualEndMmdd ? parseMmdd(row.annualEndMmdd) : null,
    days: row.daysOfWeek.reduce((bits, d) => bits | (1 << d), 0),
    todStart: row.timeOfDayStart ? parseTimeOfDay(row.timeOfDayStart) : null,
    todEnd: row.timeOfDayEnd ? parseTimeOfDay(row.timeOfDayEnd) : null,
    timezone: shared.string(row.timezone),
    linkType: shared.string(row.linkType),
    countries: shared.set(row.locationCountries, upper),
    regions: shared.set(row.locationRegions, upper),
    cities: shared.set(row.locationCities, lower),
    href: headerSafeUrl(row.customUrl),
    anchor: shared.string(HEADER_SAFE.test(row.sectionAnchor) ? row.sectionAnchor : percentEncode(row.sectionAnchor)),
    title: shared.string(row.title),
    mediaType: shared.string(row.mediaType),
    hreflang: shared.list(row.hreflang),
  }
}

/** Where the caller is: ISO 3166-1 country, ISO 3166-2 region, city name (each may be unknown). */
export type Place = { country: string | null; region: string | null; city: string | null }

/** Local calendar and clock in one time zone. */
type LocalTime = { mmdd: number; weekday: number; minutes: number }

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 }
const formatters = new Map<string, Intl.DateTimeFormat>()
const recent = new Map<string, { minute: number; local: LocalTime }>()

/** The local date, ISO weekday and minute of the day at `ms` in `timezone` (DST-correct, from ICU). */
export function localTime(ms: number, timezone: string): LocalTime {
  const minute = Math.floor(ms / 60_000)
  const cached = recent.get(timezone)
  if (cached && cached.minute === minute) return cached.local
  let format = formatters.get(timezone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
    })
    formatters.set(timezone, format)
  }
  const parts: Record<string, string> = {}
  for (const p of format.formatToParts(ms)) parts[p.type] = p.value
  const local = {
    mmdd: Number(parts.month) * 100 + Number(parts.day),
    weekday: WEEKDAYS[parts.weekday!] ?? 0,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
  }
  recent.set(timezone, { minute, local })
  return local
}

/** Inclusive at both ends; a window whose end comes before its start wraps the new year. */
const inAnnual = (mmdd: number, start: number, end: number) =>
  start <= end ? mmdd >= start && mmdd <= end : mmdd >= start || mmdd <= end

/** End exclusive; an end before the start wraps midnight. */
const inDay = (minutes: number, start: number, end: number) =>
  start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end

/**
 * The first condition of `rule` that does not hold at `ms` for a caller at `place`, or null when
 * all hold. The link type is not a condition here: the caller compares it.
 */
export function failedCondition(rule: CompiledRule, ms: number, place: Place): string | null {
  if (rule.startMs !== null && ms < rule.startMs) return 'absolute_start_at'
  if (rule.endMs !== null && ms >= rule.endMs) return 'absolute_end_at'
  if (rule.countries && !(place.country && rule.countries.has(place.country))) return 'location_countries'
  if (rule.regions && !(place.region && rule.regions.has(place.region))) return 'location_regions'
  if (rule.cities && !(place.city && rule.cities.has(place.city.toLowerCase()))) return 'location_cities'
  if (rule.annualStart === null && rule.days === 0 && rule.todStart === null) return null
  const local = localTime(ms, rule.timezone)
  if (rule.annualStart !== null && !inAnnual(local.mmdd, rule.annualStart, rule.annualEnd!)) return 'annual_window'
  if (rule.days !== 0 && (rule.days & (1 << local.weekday)) === 0) return 'days_of_week'
  if (rule.todStart !== null && !inDay(local.minutes, rule.todStart, rule.todEnd!)) return 'time_of_day'
  return null
}
