import { hasValidCheckDigit } from '../shared/gs1'

/**
 * GS1 Application Identifiers accepted in GS1-128 input (GS1 General Specifications §3.2):
 * data type, fixed or maximum length, and whether the value ends in a GS1 check digit.
 */
type Ai = { numeric: boolean; min: number; max: number; check?: boolean; date?: boolean; title: string }

const fixed = (n: number, title: string, extra: Partial<Ai> = {}): Ai => ({
  numeric: true,
  min: n,
  max: n,
  title,
  ...extra,
})
const upTo = (n: number, numeric: boolean, title: string): Ai => ({ numeric, min: 1, max: n, title })

const TABLE: Record<string, Ai> = {
  '00': fixed(18, 'SSCC', { check: true }),
  '01': fixed(14, 'GTIN', { check: true }),
  '02': fixed(14, 'CONTENT', { check: true }),
  '10': upTo(20, false, 'BATCH/LOT'),
  '11': fixed(6, 'PROD DATE', { date: true }),
  '12': fixed(6, 'DUE DATE', { date: true }),
  '13': fixed(6, 'PACK DATE', { date: true }),
  '15': fixed(6, 'BEST BEFORE', { date: true }),
  '16': fixed(6, 'SELL BY', { date: true }),
  '17': fixed(6, 'USE BY', { date: true }),
  '20': fixed(2, 'VARIANT'),
  '21': upTo(20, false, 'SERIAL'),
  '22': upTo(20, false, 'CPV'),
  '30': upTo(8, true, 'VAR. COUNT'),
  '37': upTo(8, true, 'COUNT'),
  '240': upTo(30, false, 'ADDITIONAL ID'),
  '241': upTo(30, false, 'CUST. PART No.'),
  '250': upTo(30, false, 'SECONDARY SERIAL'),
  '251': upTo(30, false, 'REF. TO SOURCE'),
  '400': upTo(30, false, 'ORDER NUMBER'),
  '401': upTo(30, false, 'GINC'),
  '402': fixed(17, 'GSIN', { check: true }),
  '403': upTo(30, false, 'ROUTE'),
  '410': fixed(13, 'SHIP TO LOC', { check: true }),
  '411': fixed(13, 'BILL TO', { check: true }),
  '412': fixed(13, 'PURCHASE FROM', { check: true }),
  '413': fixed(13, 'SHIP FOR LOC', { check: true }),
  '414': fixed(13, 'LOC No.', { check: true }),
  '415': fixed(13, 'PAY TO', { check: true }),
  '416': fixed(13, 'PROD/SERV LOC', { check: true }),
  '420': upTo(20, false, 'SHIP TO POST'),
  '422': fixed(3, 'ORIGIN'),
  '7003': fixed(10, 'EXPIRY TIME'),
  '8004': upTo(30, false, 'GIAI'),
  '8005': fixed(6, 'PRICE PER UNIT'),
  '8020': upTo(25, false, 'REF No.'),
  '90': upTo(30, false, 'INTERNAL'),
}
// Trade measures 310n-369n (six digits, n = decimal places) and amounts 390n-393n.
for (const base of [
  310, 311, 312, 313, 314, 315, 316, 320, 321, 322, 323, 324, 325, 326, 327, 328, 329, 330, 331, 332, 333, 334, 335,
  336, 337, 340, 341, 342, 343, 344, 345, 346, 347, 348, 349, 350, 351, 352, 353, 354, 355, 356, 357, 360, 361, 362,
  363, 364, 365, 366, 367, 368, 369,
])
  for (let n = 0; n <= 9; n++) TABLE[`${base}${n}`] = fixed(6, `MEASURE ${base}${n}`)
for (let n = 0; n <= 9; n++) {
  TABLE[`390${n}`] = upTo(15, true, 'AMOUNT')
  TABLE[`392${n}`] = upTo(15, true, 'PRICE')
}
for (let ai = 91; ai <= 99; ai++) TABLE[String(ai)] = upTo(90, false, 'INTERNAL')

/** GS1 AI encodable character set 82. */
const CSET82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/

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
    const rule = TABLE[ai]
    if (!rule) return { problem: `unknown or unsupported Application Identifier (${ai})` }
    if (value.length < rule.min || value.length > rule.max)
      return {
        problem: `AI (${ai}) ${rule.title} takes ${rule.min === rule.max ? rule.min : `${rule.min}-${rule.max}`} characters; got ${value.length}`,
      }
    if (rule.numeric && !/^\d+$/.test(value)) return { problem: `AI (${ai}) ${rule.title} takes digits only` }
    if (!rule.numeric && !CSET82.test(value))
      return { problem: `AI (${ai}) ${rule.title} has a character outside GS1 set 82` }
    if (rule.check && !hasValidCheckDigit(value)) return { problem: `AI (${ai}) ${rule.title} has a wrong check digit` }
    if (rule.date && !validDate(value)) return { problem: `AI (${ai}) ${rule.title} is not a YYMMDD date` }
    elements.push({ ai, value })
    at = pattern.lastIndex
  }
  if (elements.length === 0) return { problem: 'no Application Identifier found' }
  return { elements }
}

function validDate(yymmdd: string): boolean {
  const month = Number(yymmdd.slice(2, 4))
  const day = Number(yymmdd.slice(4, 6))
  return month >= 1 && month <= 12 && day >= 0 && day <= 31 // day 00 = end of month (GS1)
}
