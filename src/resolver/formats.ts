import { iso31662 } from 'iso-3166'
import { LINK_TYPES } from './link-types'

/**
 * The value formats of a resolution rule (contract §6): GS1 Web Vocabulary link types, `MM-DD`,
 * `HH:MM`, IANA time zones and ISO 3166-2 subdivisions. Each check answers why a value is wrong,
 * or null.
 */

export const DEFAULT_LINK = 'gs1:defaultLink'
/** The namespace the `gs1:` prefix stands for in linksets. */
export const GS1_VOC = 'https://gs1.org/voc/'
/**
 * Every namespace GS1 has written its vocabulary under: the vocabulary's own (`ref.gs1.org`, since
 * 1.16) and its two equivalents (`owl:equivalentProperty` of each link type).
 */
const GS1_NAMESPACES = ['https://ref.gs1.org/voc/', GS1_VOC, 'https://www.gs1.org/voc/']

// titles for link types whose term does not read as words
const TITLES: Record<string, string> = {
  'gs1:pip': 'Product information page',
  'gs1:epil': 'Electronic patient information leaflet',
  'gs1:smpc': 'Summary of product characteristics',
  'gs1:epcis': 'EPCIS repository',
  'gs1:faqs': 'FAQs',
  'gs1:jws': 'JSON Web Signature',
  'gs1:defaultLink': 'Default link',
}

/** A readable title for a link type: `gs1:allergenInfo` → "Allergen info". */
export function linkTypeTitle(linkType: string): string {
  const known = TITLES[linkType]
  if (known) return known
  const words = linkType
    .replace(/^gs1:/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

const TERM = /^[A-Za-z][A-Za-z0-9]*$/

/**
 * A `linkType` query value as a CURIE (`https://gs1.org/voc/pip`, the form linksets use, is
 * `gs1:pip`, as are its `ref.gs1.org` and `www.gs1.org` forms), or null when it has no link
 * type's form. A well-formed term the vocabulary lacks is returned too: the item has no such link
 * (404), as GS1's resolver test suite expects.
 */
export function linkTypeCurie(value: string): string | null {
  if (LINK_TYPES.has(value)) return value
  const namespace = value.startsWith('gs1:') ? 'gs1:' : GS1_NAMESPACES.find((ns) => value.startsWith(ns))
  const term = namespace === undefined ? null : value.slice(namespace.length)
  return term !== null && TERM.test(term) ? `gs1:${term}` : null
}

export const linkTypeProblem = (value: string) =>
  LINK_TYPES.has(value) ? null : 'must be a GS1 Web Vocabulary link type in CURIE form, such as gs1:pip'

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** `MM-DD` as the number MMDD (0229 allowed: it holds in leap years), or null. */
export function parseMmdd(value: string): number | null {
  const m = /^(\d{2})-(\d{2})$/.exec(value)
  if (!m) return null
  const month = Number(m[1])
  const day = Number(m[2])
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]!) return null
  return month * 100 + day
}

/** `HH:MM` (24-hour) as minutes after midnight, or null. */
export function parseTimeOfDay(value: string): number | null {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value)
  return m ? Number(m[1]) * 60 + Number(m[2]) : null
}

const zones = new Set<string>(['UTC', ...Intl.supportedValuesOf('timeZone')])
const zonesByLowerCase = new Set([...zones].map((z) => z.toLowerCase()))

/** Whether `value` is an IANA time zone name this runtime knows, spelt as IANA does (`UTC`, not `utc`). */
export function isTimeZone(value: string): boolean {
  if (zones.has(value)) return true
  if (zonesByLowerCase.has(value.toLowerCase())) return false
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(value)) return false
  try {
    // links such as US/Pacific are valid IANA names that supportedValuesOf leaves out
    return new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone.length > 0
  } catch {
    return false
  }
}

const SUBDIVISIONS: ReadonlySet<string> = new Set(iso31662.map((s) => s.code))

export const isSubdivision = (code: string) => SUBDIVISIONS.has(code)
