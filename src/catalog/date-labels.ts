import rules from './date-labels.json'
import { DATE_LABEL_FIELDS, type DateLabelField } from './fields'

export type DateLabelViolation = { field: DateLabelField; phrase: string; why: string }

/** Lower case, every run of spacing, hyphens and punctuation as one space, padded for whole-word search. */
const normalize = (text: string) =>
  ` ${text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `

const uniform = [...rules.uniform_terms.quality, ...rules.uniform_terms.safety]
  .map(normalize)
  .sort((a, b) => b.length - a.length) // longest first, so "use by or freeze by" is masked whole
const prohibited = rules.prohibited.map((p) => ({ ...p, normalized: normalize(p.phrase) }))

/** The prohibited date-label phrases in one text; the uniform terms are never flagged. */
/**
 * Each prohibited phrase's first word: normalizing keeps letters and digits as they are (lower
 * case), so a text whose lower case contains none of these holds no prohibited phrase.
 */
const firstWords = [...new Set(prohibited.map((p) => p.normalized.trim().split(' ')[0]!))]

export function findDateLabelPhrases(text: string): { phrase: string; why: string }[] {
  // the check runs on every product read (every row of every list page): most texts end here
  const lower = text.toLowerCase()
  if (!firstWords.some((word) => lower.includes(word))) return []
  let scanned = normalize(text)
  // Masking a uniform term leaves " ~ " where it stood, which no prohibited phrase contains: a phrase
  // found after masking was in the text before it, so a text with none skips the masking.
  if (!prohibited.some((p) => scanned.includes(p.normalized))) return []
  for (const term of uniform) scanned = scanned.replaceAll(term, ' ~ ')
  return prohibited.filter((p) => scanned.includes(p.normalized)).map(({ phrase, why }) => ({ phrase, why }))
}

export function dateLabelViolations(fields: Partial<Record<DateLabelField, string | null | undefined>>) {
  const found: DateLabelViolation[] = []
  for (const field of DATE_LABEL_FIELDS) {
    const text = fields[field]
    if (text) for (const p of findDateLabelPhrases(text)) found.push({ field, ...p })
  }
  return found
}

/** `date_label_compliance` of the product record, computed on read. */
export function dateLabelCompliance(fields: Partial<Record<DateLabelField, string | null | undefined>>) {
  const violations = dateLabelViolations(fields)
  return {
    ca_ab660: violations.length === 0 ? ('compliant' as const) : ('non_compliant' as const),
    federal: 'unknown' as const,
    notes: violations.map((v) => `${v.field}: prohibited date label "${v.phrase}" (${v.why})`),
  }
}
