import { readGtin } from '../catalog/gtin'
import { aiRule, aiValueProblem, digitalLinkQualifiers, isDigitalLinkKey } from '../shared/application-identifiers'
import { AppError } from '../shared/errors'
import { KEY_QUALIFIERS, type LinkRequest } from './resolve'

const QUALIFIER_FIELDS = new Map<string, 'cpv' | 'lot' | 'serial'>(KEY_QUALIFIERS)
/** The key qualifier sequences a GTIN takes, each in the standard's order. */
const GTIN_QUALIFIERS = digitalLinkQualifiers('01')

const SLASH = 47
const GTIN_8 = { allowUpcE: false }
const AI_NAME = /^\d{2,4}$/

const malformed = (why: string) => new AppError('invalid_digital_link', `not a valid GS1 Digital Link URI: ${why}`)

function decode(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    throw malformed(`"${segment}" is not valid percent-encoding`)
  }
}

/**
 * Reads `/01/{gtin}[/22/{cpv}][/10/{lot}][/21/{serial}]` (GS1 Digital Link URI Syntax 1.x §4):
 * the GTIN in any of its forms (normalised to 14 digits), then key qualifiers in the order the
 * standard gives, each value checked against its Application Identifier's format. A TPX (`/235/`)
 * is a valid qualifier that no rule can name: it resolves as its GTIN. Under /01/ eight digits are
 * a GTIN-8, never a UPC-E (the key is a GTIN, and GS1's toolkit reads it so). One trailing slash is
 * the same resource (GS1 Conformant Resolver: tolerated, not redirected). Throws 400 otherwise.
 */
export function parseDigitalLinkPath(raw: string): LinkRequest {
  if (!raw.startsWith('/01/')) throw malformed('expected /01/{gtin}')
  const path = raw.length > 4 && raw.charCodeAt(raw.length - 1) === SLASH ? raw.slice(0, -1) : raw
  // one string cut for the GTIN: most scans carry no qualifier (this runs for every scan)
  const end = path.indexOf('/', 4)
  const reading = readGtin(decode(end === -1 ? path.slice(4) : path.slice(4, end)), GTIN_8)
  if (!reading.ok) throw malformed(`GTIN: ${reading.reason}`)
  const request: LinkRequest = { gtin: reading.gtin14 }
  if (end === -1) return request
  const rest = path.slice(end + 1).split('/')
  if (rest.length % 2 !== 0) throw malformed('each key qualifier is an AI followed by its value')
  const sequence = GTIN_QUALIFIERS.find((s) => rest.every((ai, i) => i % 2 === 1 || s.includes(ai)))
  if (!sequence) throw malformed(`a GTIN takes the key qualifiers /22, /10 and /21 (in that order) or /235`)
  let last = -1
  for (let i = 0; i < rest.length; i += 2) {
    const ai = rest[i]!
    const value = decode(rest[i + 1]!)
    const at = sequence.indexOf(ai)
    if (at <= last) throw malformed(`key qualifier (${ai}) is out of order or repeated`)
    last = at
    const problem = aiValueProblem(ai, value)
    if (problem || value === '') throw malformed(problem ?? `key qualifier (${ai}) is empty`)
    const field = QUALIFIER_FIELDS.get(ai)
    if (field) request[field] = value
  }
  return request
}

/**
 * Checks the query's GS1 data attributes (a parameter named by an AI, GS1 Digital Link URI Syntax
 * §4.4): each value in its AI's format, and no primary key or key qualifier, which belong in the
 * path. Other parameters (`utm_source`, a number that is no AI) are the target's and pass.
 */
export function checkDataAttributes(query: URLSearchParams) {
  for (const [name, value] of query) {
    if (!AI_NAME.test(name) || !aiRule(name)) continue
    if (isDigitalLinkKey(name))
      throw malformed(`AI (${name}) is a key or key qualifier: it belongs in the path, not the query string`)
    const problem = aiValueProblem(name, value)
    if (problem) throw malformed(`query string: ${problem}`)
  }
}
