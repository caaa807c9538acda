import { AppError } from '../shared/errors'
import { checkDigitHolds, gs1CheckDigit } from '../shared/gs1'

/**
 * GTIN handling shared by every area (GS1 General Specifications §3.2 and §1.4).
 * Accepts GTIN-8, GTIN-12 (UPC-A), GTIN-13 and GTIN-14, and UPC-E (the zero-suppressed form of a
 * UPC-A), with or without separators; normalises to GTIN-14.
 */

const SEPARATORS = /[\s.-]/g
const ONLY_DIGITS = /^\d+$/
const no = (reason: string) => ({ ok: false as const, reason })

export type GtinKind = 'gtin8' | 'upce' | 'gtin12' | 'gtin13' | 'gtin14'
export type ParsedGtin = { gtin14: string; kind: GtinKind }

const invalid = (why: string) => new AppError('invalid_gtin', why, [{ field: 'gtin', message: why }])

/** The UPC-A a UPC-E (8 digits: number system 0/1, six digits, check digit) stands for. */
export function expandUpcE(upce: string): string | null {
  if (!/^[01]\d{7}$/.test(upce)) return null
  const s = upce[0]!
  const [d1, d2, d3, d4, d5, d6] = upce.slice(1, 7)
  const check = upce[7]!
  let body: string
  if (d6 === '0' || d6 === '1' || d6 === '2') body = `${s}${d1}${d2}${d6}0000${d3}${d4}${d5}`
  else if (d6 === '3') body = `${s}${d1}${d2}${d3}00000${d4}${d5}`
  else if (d6 === '4') body = `${s}${d1}${d2}${d3}${d4}00000${d5}`
  else body = `${s}${d1}${d2}${d3}${d4}${d5}0000${d6}`
  return `${body}${check}`
}

/** A GTIN read without throwing: feeds count and sample bad codes instead of failing. */
export type GtinReading = ({ ok: true } & ParsedGtin) | { ok: false; reason: string }

/**
 * Structure only: digits, length and check digit; no range policy. An 8-digit code with number
 * system 0 or 1 whose UPC-E expansion checks is taken as UPC-E (a GTIN-8 starting with 0 would be a
 * restricted number anyway); `allowUpcE: false` reads every 8-digit code as a GTIN-8, for sources
 * known to mean EAN-8.
 */
export function readGtin(input: string, options: { allowUpcE?: boolean } = {}): GtinReading {
  // a scan or a feed sends digits alone: they need no clean-up (the resolver reads one a request)
  const plain = ONLY_DIGITS.test(input)
  const digits = plain ? input : input.trim().replace(SEPARATORS, '')
  if (digits === '') return no('a GTIN is required')
  if (!plain && !ONLY_DIGITS.test(digits)) return no('a GTIN has only digits (and optional spaces, hyphens or dots)')
  switch (digits.length) {
    case 8: {
      const upca = options.allowUpcE !== false && /^[01]/.test(digits) ? expandUpcE(digits) : null
      if (upca && checkDigitHolds(upca)) return { ok: true, gtin14: upca.padStart(14, '0'), kind: 'upce' }
      if (!checkDigitHolds(digits)) return no(checkDigitProblem(digits))
      return { ok: true, gtin14: digits.padStart(14, '0'), kind: 'gtin8' }
    }
    case 12:
    case 13:
    case 14: {
      if (!checkDigitHolds(digits)) return no(checkDigitProblem(digits))
      const kind = digits.length === 12 ? 'gtin12' : digits.length === 13 ? 'gtin13' : 'gtin14'
      return { ok: true, gtin14: digits.padStart(14, '0'), kind }
    }
    default:
      return no(`a GTIN has 8, 12, 13 or 14 digits; got ${digits.length}`)
  }
}

/** As readGtin, throwing `invalid_gtin` (422) for the API. */
export function parseGtin(input: string, options: { allowUpcE?: boolean } = {}): ParsedGtin {
  const reading = readGtin(input, options)
  if (!reading.ok) throw invalid(reading.reason)
  return { gtin14: reading.gtin14, kind: reading.kind }
}

function checkDigitProblem(digits: string) {
  const expected = gs1CheckDigit(digits.slice(0, -1))
  return `wrong check digit: ${digits} should end in ${expected}, not ${digits.at(-1)}`
}

/**
 * Why a GTIN-14 is not a trade item number that can be registered, or null. Restricted
 * circulation numbers (RCN) and coupon numbers are not GTINs of trade items (GenSpecs §1.4.4,
 * Figure 1.4.2-1; UPC number systems 2, 4 and 5).
 */
export function rangeProblem(gtin14: string): string | null {
  if (gtin14.startsWith('000000')) {
    const first = gtin14[6]
    if (first === '0' || first === '2') return 'restricted circulation number (GS1-8 prefix 0 or 2, RCN-8)'
    return null
  }
  const prefix = Number(gtin14.slice(1, 4)) // the GS1 prefix of the GTIN-13 inside the GTIN-14
  if ((prefix >= 20 && prefix <= 29) || (prefix >= 200 && prefix <= 299))
    return `restricted circulation number (GS1 prefix ${gtin14.slice(1, 4)}: in-store or variable-measure items)`
  if (prefix >= 40 && prefix <= 49)
    return `restricted circulation number (GS1 prefix ${gtin14.slice(1, 4)}: within a company)`
  if (prefix >= 50 && prefix <= 59) return `coupon number (GS1 prefix ${gtin14.slice(1, 4)}: GS1 US coupons)`
  if (prefix === 980) return 'refund receipt number (GS1 prefix 980), not a trade item'
  if ((prefix >= 981 && prefix <= 984) || prefix >= 990) return `coupon number (GS1 prefix ${gtin14.slice(1, 4)})`
  return null
}

/** A trade-item GTIN read without throwing: structurally valid and outside restricted and coupon ranges. */
export function readTradeGtin(input: string, options: { allowUpcE?: boolean } = {}): GtinReading {
  const reading = readGtin(input, options)
  if (!reading.ok) return reading
  const problem = rangeProblem(reading.gtin14)
  return problem ? { ok: false, reason: `${reading.gtin14} is a ${problem}` } : reading
}

/** A GTIN that may be registered, or 422 `invalid_gtin`. */
export function normalizeGtin(input: string): string {
  const reading = readTradeGtin(input)
  if (!reading.ok) throw invalid(reading.reason)
  return reading.gtin14
}
