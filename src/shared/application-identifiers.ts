/// <reference path="./digital-link-toolkit.d.ts" />
import GS1DigitalLinkToolkit from 'digital-link.js/lib/GS1DigitalLinkCompressionPrototype/GS1DigitalLinkToolkit.js'
import { hasValidCheckDigit } from './gs1'

/**
 * The GS1 Application Identifiers, one grammar for GS1-128 element strings (barcodes) and GS1
 * Digital Link paths (resolver). The table is GS1's own, from the Digital Link toolkit that ships
 * in `digital-link.js`; the AIs the General Specifications added after that table was cut are
 * listed below, with their formats as the GS1 Syntax Dictionary gives them.
 */
type ToolkitEntry = { ai: string; label?: string; title?: string; format: string; checkDigit?: string; regex: string }
type Toolkit = {
  aitable: ToolkitEntry[]
  aiQualifiers: Record<string, string[]>
  dateSemantics: Record<string, string[]>
  aiMaps: { identifiers: string[]; qualifiers: string[] }
}

/** One component of a format: N digits, X GS1 set 82, Y set 39, Z set 64 (base64url). */
type Part = { set: 'N' | 'X' | 'Y' | 'Z'; min: number; max: number }
export type AiRule = {
  ai: string
  title: string
  format: string
  parts: Part[]
  /** position (1-based) of the GS1 check digit: the key's last digit, or a fixed position */
  checkAt?: number | 'last'
  /** the first six digits are a YYMMDD date (day 00 = end of month) */
  date: boolean
}

// AIs of the GS1 General Specifications that the toolkit's table predates: [AI, format, title]
const LATER: [string, string, string][] = [
  ['235', 'X..28', 'TPX'],
  ['242', 'N..6', 'MTO VARIANT'],
  ['243', 'X..20', 'PCN'],
  ['426', 'N3', 'COUNTRY - FULL PROCESS'],
  ['427', 'X..3', 'ORIGIN SUBDIVISION'],
  ['4300', 'X..35', 'SHIP TO COMP'],
  ['4301', 'X..35', 'SHIP TO NAME'],
  ['4302', 'X..70', 'SHIP TO ADD1'],
  ['4303', 'X..70', 'SHIP TO ADD2'],
  ['4304', 'X..70', 'SHIP TO SUB'],
  ['4305', 'X..70', 'SHIP TO LOC'],
  ['4306', 'X..70', 'SHIP TO REG'],
  ['4307', 'X2', 'SHIP TO COUNTRY'],
  ['4308', 'X..30', 'SHIP TO PHONE'],
  ['4309', 'N20', 'SHIP TO GEO'],
  ['4310', 'X..35', 'RTN TO COMP'],
  ['4311', 'X..35', 'RTN TO NAME'],
  ['4312', 'X..70', 'RTN TO ADD1'],
  ['4313', 'X..70', 'RTN TO ADD2'],
  ['4314', 'X..70', 'RTN TO SUB'],
  ['4315', 'X..70', 'RTN TO LOC'],
  ['4316', 'X..70', 'RTN TO REG'],
  ['4317', 'X2', 'RTN TO COUNTRY'],
  ['4318', 'X..20', 'RTN TO POST'],
  ['4319', 'X..30', 'RTN TO PHONE'],
  ['4320', 'X..35', 'SRV DESCRIPTION'],
  ['4321', 'N1', 'DANGEROUS GOODS'],
  ['4322', 'N1', 'AUTH TO LEAVE'],
  ['4323', 'N1', 'SIG REQUIRED'],
  ['4324', 'N10', 'NOT BEF DEL DT'],
  ['4325', 'N10', 'NOT AFT DEL DT'],
  ['4326', 'N6', 'REL DATE'],
  ['4330', 'N6+X..1', 'MAX TEMP F.'],
  ['4331', 'N6+X..1', 'MAX TEMP C.'],
  ['4332', 'N6+X..1', 'MIN TEMP F.'],
  ['4333', 'N6+X..1', 'MIN TEMP C.'],
  ['7011', 'N6+N..4', 'TEST BY DATE'],
  ['7040', 'N1+X3', 'UIC+EXT'],
  ['715', 'X..20', 'NHRN NDC'],
  ['7240', 'X..20', 'PROTOCOL'],
  ['7241', 'N2', 'AIDC MEDIA TYPE'],
  ['7242', 'X..25', 'VCN'],
  ['8030', 'Z..90', 'DIGSIG'],
  ...[0, 1, 2, 3, 4, 5].map((n): [string, string, string] => [`395${n}`, 'N6', 'PRICE/UoM']),
]
const LATER_DATES = new Set(['4324', '4325', '4326', '7011'])
// Digital Link qualifier paths the toolkit's table predates (alternatives after a `|`)
const LATER_QUALIFIERS: Record<string, string[][]> = { '01': [['235']], '414': [['7040']], '417': [['7040']] }

const toolkit = new GS1DigitalLinkToolkit() as unknown as Toolkit

function partsOf(format: string): Part[] {
  return format.split('+').map((piece, i) => {
    const m = /^([NXYZ])(\d+)?(?:\.\.(\d+))?$/.exec(piece)
    if (!m) throw new Error(`unreadable AI format ${format}`)
    const set = m[1] as Part['set']
    if (m[3] === undefined) return { set, min: Number(m[2]), max: Number(m[2]) }
    // a variable part after the first is optional (N13+X..17: the GDTI's serial may be absent)
    return { set, min: m[2] ? Number(m[2]) : i === 0 ? 1 : 0, max: Number(m[3]) }
  })
}

const rule = (ai: string, format: string, title: string, date: boolean, checkDigit?: string): AiRule => ({
  ai,
  title,
  format,
  parts: partsOf(format),
  checkAt: checkDigit === 'L' ? 'last' : checkDigit ? Number(checkDigit) : undefined,
  date,
})

const TABLE = new Map<string, AiRule>()
for (const e of toolkit.aitable)
  TABLE.set(
    e.ai,
    rule(e.ai, e.format, (e.label ?? e.title ?? e.ai).trim(), e.ai in toolkit.dateSemantics, e.checkDigit),
  )
for (const [ai, format, title] of LATER) if (!TABLE.has(ai)) TABLE.set(ai, rule(ai, format, title, LATER_DATES.has(ai)))

export const aiRule = (ai: string): AiRule | undefined => TABLE.get(ai)
export const applicationIdentifiers = (): AiRule[] => [...TABLE.values()]

/** GS1 AI encodable character sets 82, 39 and 64. */
const SETS: Record<Part['set'], string> = {
  N: '0-9',
  X: `!"%&'()*+,\\-./0-9:;<=>?A-Z_a-z`,
  Y: '#\\-/0-9A-Z',
  Z: '\\-0-9A-Z_a-z=',
}
const SET_NAMES: Record<Part['set'], string> = {
  N: 'digits only',
  X: 'characters of GS1 set 82 only',
  Y: 'characters of GS1 set 39 only',
  Z: 'characters of GS1 set 64 only',
}
const patterns = new Map<string, RegExp>()
function patternOf(r: AiRule): RegExp {
  let p = patterns.get(r.ai)
  if (!p) {
    p = new RegExp(`^${r.parts.map((part) => `[${SETS[part.set]}]{${part.min},${part.max}}`).join('')}$`)
    patterns.set(r.ai, p)
  }
  return p
}

const lengthOf = (r: AiRule) => ({
  min: r.parts.reduce((n, p) => n + p.min, 0),
  max: r.parts.reduce((n, p) => n + p.max, 0),
})

/** Why `value` is not a valid AI (`ai`) element value, or null. */
export function aiValueProblem(ai: string, value: string): string | null {
  const r = TABLE.get(ai)
  if (!r) return `unknown Application Identifier (${ai})`
  const { min, max } = lengthOf(r)
  if (value.length < min || value.length > max)
    return `AI (${ai}) ${r.title} takes ${min === max ? min : `${min}-${max}`} characters; got ${value.length}`
  if (!patternOf(r).test(value)) {
    const sets = [...new Set(r.parts.map((p) => p.set))]
    return sets.length === 1
      ? `AI (${ai}) ${r.title} takes ${SET_NAMES[sets[0]!]}`
      : `AI (${ai}) ${r.title} does not match its format ${r.format}`
  }
  if (r.checkAt !== undefined) {
    const key = r.checkAt === 'last' ? value : value.slice(0, r.checkAt)
    if (!hasValidCheckDigit(key)) return `AI (${ai}) ${r.title} has a wrong check digit`
  }
  if (r.date && !validDate(value)) return `AI (${ai}) ${r.title} is not a YYMMDD date`
  return null
}

function validDate(yymmdd: string): boolean {
  const month = Number(yymmdd.slice(2, 4))
  const day = Number(yymmdd.slice(4, 6))
  return month >= 1 && month <= 12 && day >= 0 && day <= 31 // day 00 = end of month (GS1)
}

export type AiElement = { ai: string; value: string }

/** Parses "(01)09501101530003(10)ABC" into elements, or returns the reason it is not valid. */
export function parseAiString(input: string): { elements: AiElement[] } | { problem: string } {
  const text = input.trim()
  const elements: AiElement[] = []
  const pattern = /\((\d{2,4})\)([^(]*)/y
  let at = 0
  while (at < text.length) {
    pattern.lastIndex = at
    const m = pattern.exec(text)
    if (!m) return { problem: `expected "(AI)value" at position ${at + 1}` }
    const [, ai, value] = m as unknown as [string, string, string]
    const problem = aiValueProblem(ai, value)
    if (problem) return { problem: problem.replace('unknown Application', 'unknown or unsupported Application') }
    elements.push({ ai, value })
    at = pattern.lastIndex
  }
  if (elements.length === 0) return { problem: 'no Application Identifier found' }
  return { elements }
}

// every primary key and key qualifier: they belong in a Digital Link's path, never its query
const PATH_AIS: ReadonlySet<string> = new Set([
  ...toolkit.aiMaps.identifiers,
  ...toolkit.aiMaps.qualifiers,
  ...Object.values(LATER_QUALIFIERS).flatMap((sequences) => sequences.flat()),
])

/** Whether `ai` is a Digital Link primary key or key qualifier (not a data attribute). */
export const isDigitalLinkKey = (ai: string) => PATH_AIS.has(ai)

/**
 * The key qualifiers a Digital Link primary key takes, as alternative ordered sequences: for a
 * GTIN, `/22/…/10/…/21/…` (each optional, in that order) or `/235/…`.
 */
export function digitalLinkQualifiers(primaryKey: string): string[][] {
  const own = toolkit.aiQualifiers[primaryKey]
  return [...(own ? [own] : []), ...(LATER_QUALIFIERS[primaryKey] ?? [])]
}
