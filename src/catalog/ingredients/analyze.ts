import type { SubstanceMatch } from '../../db/schema/catalog'
import data from './substances.json'

/**
 * Ingredient analysis: the text is split into spans (commas, semicolons, colons, nested
 * brackets, "and"/"or" in several languages, sentences) and each span's words are matched to
 * substance names, longest name first, so "cocoa butter" is never "butter". Trace statements
 * ("may contain", "peut contenir", "traces possibles de", …) up to the end of their sentence give
 * `mayContain`; everything else gives `contains`. Confidence: the substance's main name 1.0, another
 * name 0.9, an E-number 0.95, a compound-word prefix 0.75, a one-letter misspelling 0.6.
 */

export type IngredientAnalysis = {
  contains: string[]
  mayContain: string[]
  certifications: string[]
  substances: SubstanceMatch[]
}

type Substance = { slug: string; allergen: string | null; names: string[]; e?: string[] }
type Entry = { tokens: string[]; substance: Substance; confidence: number; prefix: boolean }

const SUBSTANCES = data.substances as Substance[]

/** Lower case without accents or mark-up; E-numbers as one word ("E 250" -> "e250"). */
export function foldText(text: string): string {
  return text
    .toLowerCase()
    .replaceAll('œ', 'oe')
    .replaceAll('æ', 'ae')
    .replaceAll('ß', 'ss')
    .replaceAll('ø', 'o')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[_'’`´^*+#&]/g, ' ')
    .replace(/\be[\s-]?(\d{3,4}[a-z]?)\b/g, 'e$1')
}

const words = (text: string) => text.split(/[^a-z0-9]+/).filter(Boolean)

// Index of names by first word; compound-word prefixes (names ending in *) kept apart.
const byFirstWord = new Map<string, Entry[]>()
const prefixes: Entry[] = []
const fuzzyNames: Entry[] = []
for (const substance of SUBSTANCES) {
  substance.names.forEach((name, i) => {
    const prefix = name.endsWith('*')
    const tokens = words(foldText(name.replace(/\*$/, '')))
    const entry: Entry = { tokens, substance, confidence: i === 0 ? 1 : 0.9, prefix }
    if (prefix) prefixes.push({ ...entry, confidence: 0.75 })
    const list = byFirstWord.get(tokens[0]!) ?? []
    list.push(entry)
    byFirstWord.set(tokens[0]!, list)
    if (tokens.length === 1 && tokens[0]!.length >= 8) fuzzyNames.push({ ...entry, confidence: 0.6 })
  })
  for (const e of substance.e ?? []) {
    const list = byFirstWord.get(e) ?? []
    list.push({ tokens: [e], substance, confidence: 0.95, prefix: false })
    byFirstWord.set(e, list)
  }
}
for (const list of byFirstWord.values()) list.sort((a, b) => b.tokens.length - a.tokens.length)

/** Singular and plural forms are the same word ("almond", "almonds"; "oeuf", "oeufs"). */
const sameWord = (word: string, name: string) => word === name || word === `${name}s` || word === `${name}es`
const stems = (word: string) =>
  [word, word.endsWith('s') ? word.slice(0, -1) : '', word.endsWith('es') ? word.slice(0, -2) : ''].filter(Boolean)

function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false
  let i = 0
  let j = 0
  let edits = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++
      j++
      continue
    }
    if (++edits > 1) return false
    if (a.length > b.length) i++
    else if (b.length > a.length) j++
    else {
      i++
      j++
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1
}

type Found = { substance: Substance; span: string; confidence: number }

/** The substances named in one span. */
function matchSpan(span: string): Found[] {
  const tokens = words(span)
  const found: Found[] = []
  const used = new Array<boolean>(tokens.length).fill(false)
  for (let i = 0; i < tokens.length; i++) {
    let best: Entry | null = null
    for (const stem of stems(tokens[i]!)) {
      for (const entry of byFirstWord.get(stem) ?? []) {
        if (best && best.tokens.length >= entry.tokens.length) continue
        const fits = entry.tokens.every((t, k) => i + k < tokens.length && sameWord(tokens[i + k]!, t))
        if (fits) best = entry
      }
    }
    if (!best)
      best =
        prefixes.find((p) => tokens[i]!.startsWith(p.tokens[0]!) && tokens[i]!.length > p.tokens[0]!.length) ?? null
    if (!best) continue
    for (let k = 0; k < best.tokens.length; k++) used[i + k] = true
    found.push({ substance: best.substance, span: span.trim(), confidence: best.confidence })
    i += best.tokens.length - 1
  }
  tokens.forEach((token, i) => {
    if (used[i] || token.length < 8) return
    const near = fuzzyNames.find((f) => oneEditApart(token, f.tokens[0]!))
    if (near) found.push({ substance: near.substance, span: span.trim(), confidence: 0.6 })
  })
  return found
}

const SPAN_BREAKS = /[,;:()[\]{}/]|\.(?!\d)|\b(?:and|or|et|ou|y|e|und|oder)\b/

function spansOf(text: string): string[] {
  return text
    .split(SPAN_BREAKS)
    .map((s) => s.replace(/\d+(?:[.,]\d+)?\s*%/g, ' ').trim())
    .filter(Boolean)
}

const TRACE_TRIGGERS = data.trace_statements
  .map((t) => words(foldText(t)).join(' '))
  .sort((a, b) => b.length - a.length)

/** Splits the folded text into the ingredient part and the trace-statement part. */
function separateTraces(folded: string): { ingredients: string; traces: string } {
  let ingredients = ''
  let traces = ''
  let rest = folded
  for (;;) {
    let at = -1
    let trigger = ''
    for (const t of TRACE_TRIGGERS) {
      const m = new RegExp(`\\b${t.replaceAll(' ', '\\s+')}\\b`).exec(rest)
      if (m && (at === -1 || m.index < at)) {
        at = m.index
        trigger = m[0]
      }
    }
    if (at === -1) return { ingredients: ingredients + rest, traces }
    ingredients += `${rest.slice(0, at)}. `
    const after = rest.slice(at + trigger.length)
    const end = after.search(/\.(?!\d)/)
    traces += `${end === -1 ? after : after.slice(0, end)}. `
    rest = end === -1 ? '' : after.slice(end + 1)
  }
}

const CERTIFICATIONS = Object.entries(data.certifications).map(([slug, names]) => ({
  slug,
  patterns: names.map((n) => new RegExp(`\\b${words(foldText(n)).join('\\s+')}\\b`)),
}))

export function analyzeIngredients(text: string): IngredientAnalysis {
  const folded = foldText(text)
  const { ingredients, traces } = separateTraces(folded)
  const inIngredients = spansOf(ingredients).flatMap(matchSpan)
  const inTraces = spansOf(traces).flatMap(matchSpan)
  const allergens = (found: Found[]) =>
    [...new Set(found.map((f) => f.substance.allergen).filter((a): a is string => a !== null))].sort()
  const substances = new Map<string, SubstanceMatch>()
  for (const f of inIngredients) {
    const seen = substances.get(f.substance.slug)
    if (!seen || seen.confidence < f.confidence)
      substances.set(f.substance.slug, { slug: f.substance.slug, span: f.span, confidence: f.confidence })
  }
  return {
    contains: allergens(inIngredients),
    mayContain: allergens(inTraces),
    certifications: CERTIFICATIONS.filter((c) => c.patterns.some((p) => p.test(folded))).map((c) => c.slug),
    substances: [...substances.values()],
  }
}

export const substanceCount = SUBSTANCES.length
