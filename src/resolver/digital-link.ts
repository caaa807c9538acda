import { readGtin } from '../catalog/gtin'
import { aiValueProblem, digitalLinkQualifiers } from '../shared/application-identifiers'
import { AppError } from '../shared/errors'
import { KEY_QUALIFIERS, type LinkRequest } from './resolve'

const QUALIFIER_FIELDS = new Map<string, 'cpv' | 'lot' | 'serial'>(KEY_QUALIFIERS)
/** The key qualifier sequences a GTIN takes, each in the standard's order. */
const GTIN_QUALIFIERS = digitalLinkQualifiers('01')

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
 * is a valid qualifier that no rule can name: it resolves as its GTIN. Throws 400 otherwise.
 */
export function parseDigitalLinkPath(path: string): LinkRequest {
  const segments = path.split('/').slice(1)
  if (segments[0] !== '01' || segments.length < 2) throw malformed('expected /01/{gtin}')
  const reading = readGtin(decode(segments[1]!))
  if (!reading.ok) throw malformed(`GTIN: ${reading.reason}`)
  const request: LinkRequest = { gtin: reading.gtin14 }
  if (segments.length === 2) return request
  const rest = segments.slice(2)
  if (rest.length % 2 !== 0) throw malformed('each key qualifier is an AI followed by its value')
  const given = Array.from({ length: rest.length / 2 }, (_, i) => ({
    ai: rest[2 * i]!,
    value: decode(rest[2 * i + 1]!),
  }))
  const sequence = GTIN_QUALIFIERS.find((s) => given.every((g) => s.includes(g.ai)))
  if (!sequence) throw malformed(`a GTIN takes the key qualifiers /22, /10 and /21 (in that order) or /235`)
  let last = -1
  for (const { ai, value } of given) {
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
