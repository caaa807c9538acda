import { readGtin } from '../catalog/gtin'

/**
 * Web-search syntax, as people type it: words (all must match), "quoted phrases", `-` before a
 * word or phrase to exclude it, and `OR` (upper case) between two terms for either. The last word
 * also matches as a prefix while it is being typed (no space after it yet): `choc` finds chocolate.
 */
export type Term = { text: string; phrase: boolean; prefix: boolean }
export type ParsedQuery = {
  /** every clause must match; a clause matches when any of its terms does */
  clauses: Term[][]
  /** none may match */
  excluded: Term[]
  /** the GTIN-14 when the whole query is one GTIN in any form (separators, UPC-E) */
  gtin: string | null
  /** only digits and separators: a code, never matched by similarity */
  code: boolean
}

const TOKENS = /(-?)"([^"]*)"?|(-?)([^\s"]+)/g
const HAS_WORD = /[\p{L}\p{N}]/u
const ONE_WORD = /^[\p{L}\p{N}]+$/u

export function parseQuery(q: string): ParsedQuery {
  const clauses: Term[][] = []
  const excluded: Term[] = []
  let joinNext = false
  let last: Term | null = null
  for (const m of q.matchAll(TOKENS)) {
    const quoted = m[2] !== undefined
    const negated = (quoted ? m[1] : m[3]) === '-'
    const text = (quoted ? m[2]! : m[4]!).trim()
    if (!quoted && !negated && text === 'OR') {
      joinNext = clauses.length > 0
      continue
    }
    if (!HAS_WORD.test(text)) continue
    const term: Term = { text, phrase: quoted, prefix: false }
    if (negated) excluded.push(term)
    else if (joinNext) clauses.at(-1)!.push(term)
    else clauses.push([term])
    joinNext = false
    last = negated ? null : term
  }
  // the word being typed: the last one, unquoted, with nothing after it
  if (last && !last.phrase && ONE_WORD.test(last.text) && !/\s$/.test(q) && q.trimEnd().endsWith(last.text))
    last.prefix = true
  const compact = q.trim()
  const code = /^[\d\s.-]+$/.test(compact) && /\d/.test(compact)
  const reading = code ? readGtin(compact, { allowUpcE: true }) : null
  return { clauses, excluded, gtin: reading?.ok ? reading.gtin14 : null, code }
}

/** The positive terms' words, for substring and similarity matching. */
export const positiveText = (p: ParsedQuery) => p.clauses.flatMap((c) => c.map((t) => t.text)).join(' ')
