import type { SubstanceMatch } from '../../db/schema/catalog'
import { foldText, foldWithOrigin, words } from './fold'
import data from './substances.json'

/**
 * Ingredient analysis: the text is split into spans (commas, semicolons, colons, nested
 * brackets, "and"/"or" in several languages, sentences) and each span's words are matched to
 * substance names, longest name first, so "cocoa butter" is never "butter". Trace statements
 * ("may contain", "peut contenir", "traces possibles de", …) up to the end of their sentence give
 * `mayContain`; everything else gives `contains`. Confidence: the substance's main name 1.0, another
 * name 0.9, an E-number 0.95, a compound-word prefix 0.75, a one-letter misspelling 0.6.
 *
 * Slugs are Open Food Facts ingredient ids: an additive with one E-number is that E-number (`e250`,
 * whether the label says "E250" or "sodium nitrite"); an E-number of a group ("E221", a sulphite)
 * is its own id. A span is quoted as written on the label ("whole MILK powder").
 */

export type IngredientAnalysis = {
  contains: string[]
  mayContain: string[]
  certifications: string[]
  substances: SubstanceMatch[]
}

type Substance = { slug: string; allergen: string | null; names: string[]; e?: string[]; name_slug?: string }
/** A name to match; `slug` is the substance's, or the E-number's own when it names one of a group. */
type Entry = { tokens: string[]; substance: Substance; slug: string; confidence: number; prefix: boolean }

const SUBSTANCES = data.substances as Substance[]

// Index of names by first word; compound-word prefixes (names ending in *) kept apart.
const byFirstWord = new Map<string, Entry[]>()
const prefixes: Entry[] = []
const fuzzyNames: Entry[] = []
for (const substance of SUBSTANCES) {
  substance.names.forEach((name, i) => {
    const prefix = name.endsWith('*')
    const tokens = words(foldText(name.replace(/\*$/, '')))
    const entry: Entry = { tokens, substance, slug: substance.slug, confidence: i === 0 ? 1 : 0.9, prefix }
    if (prefix) prefixes.push({ ...entry, confidence: 0.75 })
    const list = byFirstWord.get(tokens[0]!) ?? []
    list.push(entry)
    byFirstWord.set(tokens[0]!, list)
    if (tokens.length === 1 && tokens[0]!.length >= 8) fuzzyNames.push({ ...entry, confidence: 0.6 })
  })
  for (const e of substance.e ?? []) {
    const list = byFirstWord.get(e) ?? []
    list.push({ tokens: [e], substance, slug: e, confidence: 0.95, prefix: false })
    byFirstWord.set(e, list)
  }
}
for (const list of byFirstWord.values()) list.sort((a, b) => b.tokens.length - a.tokens.length)

/**
 * The lists above, indexed so that a word looks at a few entries, not all (a scan of every prefix
 * and every misspellable name per unknown word was a third of the analysis). Each keeps the lists'
 * order, and the first that fits is taken, as from the whole list.
 */
const prefixesByLetter = Map.groupBy(prefixes, (p) => p.tokens[0]![0]!)
const fuzzyByLength = Map.groupBy(
  fuzzyNames.map((entry, order) => ({ entry, order })),
  ({ entry }) => entry.tokens[0]!.length,
)
/** The first of fuzzyNames one edit from `word` (only names one letter longer or shorter can be). */
function nearName(word: string): Entry | null {
  let near: { entry: Entry; order: number } | null = null
  for (const length of [word.length - 1, word.length, word.length + 1])
    for (const candidate of fuzzyByLength.get(length) ?? [])
      if ((!near || candidate.order < near.order) && oneEditApart(word, candidate.entry.tokens[0]!)) {
        near = candidate
        break
      }
  return near?.entry ?? null
}

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

type Found = { slug: string; allergen: string | null; span: string; confidence: number }

// Negations: "sans huile de palme", "ohne Palmöl", "without palm oil", "no palm oil", "senza olio di
// palma", "sin aceite de palma", "zonder palmolie", "sem óleo de palma" say the product has none of
// it, as do "palm oil free", "palm-oil-free" and "free from palm oil". "free" before a name needs
// its "from"/"of": in "sugar free milk chocolate" the milk is there.
const NEGATIONS = new Set(['without', 'no', 'sans', 'ohne', 'senza', 'sin', 'zonder', 'sem'])
const FREE = new Set(['free', 'frei', 'libre', 'exempt'])
const NEGATION_LINKS = new Set(['from', 'of', 'de', 'd', 'di', 'van', 'von', 'any', 'added'])

/** Whether the name at tokens[start, end) is said to be absent. */
function negated(tokens: string[], start: number, end: number): boolean {
  if (FREE.has(tokens[end] ?? '')) return true
  let k = start - 1
  while (k >= 0 && NEGATION_LINKS.has(tokens[k]!)) k--
  if (k < 0) return false
  return NEGATIONS.has(tokens[k]!) || (FREE.has(tokens[k]!) && k < start - 1)
}

/**
 * What the match below needs of one word, which depends on the word alone: the names that may start
 * at it (those whose first word is one of its stems, in the order the match tries them), the
 * compound-word prefix it starts with, and the name one edit from it (each found when first needed).
 */
type WordFacts = { starts: Entry[]; prefix?: Entry | null; near?: Entry | null }

/**
 * WordFacts remembered per word: a label's words are a small vocabulary that repeats from label to
 * label ("sugar", "salt", "emulsifier"), and looking each up anew was most of an analysis: the stems'
 * lookups, the scan of the prefixes, and the misspelling search (a fifth of the time alone, over
 * every name of its length). Bounded: at WORDS_MAX words the memo starts again empty (about 20 MB
 * of heap when full). Each word is kept as a copy of its own: a word sliced from a label shares the
 * label's characters in JavaScriptCore, and a memo of slices kept whole labels alive (a review:
 * 72 MB for 4,000 labels of 18 KB).
 */
const wordFacts = new Map<string, WordFacts>()
const WORDS_MAX = 50_000
function factsOf(word: string): WordFacts {
  let facts = wordFacts.get(word)
  if (facts === undefined) {
    facts = { starts: stems(word).flatMap((stem) => byFirstWord.get(stem) ?? []) }
    if (wordFacts.size >= WORDS_MAX) wordFacts.clear()
    wordFacts.set(word.split('').join(''), facts)
  }
  return facts
}
function prefixOf(word: string, facts: WordFacts): Entry | null {
  if (facts.prefix === undefined)
    facts.prefix =
      prefixesByLetter.get(word[0]!)?.find((p) => word.startsWith(p.tokens[0]!) && word.length > p.tokens[0]!.length) ??
      null
  return facts.prefix
}
function nearNameOf(word: string, facts: WordFacts): Entry | null {
  if (facts.near === undefined) facts.near = nearName(word)
  return facts.near
}

/** The substances named in one span; `quoted` is the span as written on the label. */
function matchSpan({ text: span, quoted }: Span): Found[] {
  const tokens = words(span)
  const found: Found[] = []
  const used = new Array<boolean>(tokens.length).fill(false)
  // each token's facts, for the misspellings' pass below (every token it reads is read here first)
  const factsAt = new Array<WordFacts>(tokens.length)
  for (let i = 0; i < tokens.length; i++) {
    let best: Entry | null = null
    const facts = factsOf(tokens[i]!)
    factsAt[i] = facts
    for (const entry of facts.starts) {
      if (best && best.tokens.length >= entry.tokens.length) continue
      const fits = entry.tokens.every((t, k) => i + k < tokens.length && sameWord(tokens[i + k]!, t))
      if (fits) best = entry
    }
    if (!best) best = prefixOf(tokens[i]!, facts)
    if (!best) continue
    for (let k = 0; k < best.tokens.length; k++) used[i + k] = true
    if (!negated(tokens, i, i + best.tokens.length))
      found.push({ slug: best.slug, allergen: best.substance.allergen, span: quoted, confidence: best.confidence })
    i += best.tokens.length - 1
  }
  tokens.forEach((token, i) => {
    if (used[i] || token.length < 8 || negated(tokens, i, i + 1)) return
    const near = nearNameOf(token, factsAt[i]!)
    if (near) found.push({ slug: near.slug, allergen: near.substance.allergen, span: quoted, confidence: 0.6 })
  })
  return found
}

const SPAN_BREAKS = /[,;:()[\]{}/]|\.(?!\d)|\b(?:and|or|et|ou|y|e|und|oder)\b/g
const PERCENT = /\d+(?:[.,]\d+)?\s*%/g

type Span = { text: string; quoted: string }
type Folded = ReturnType<typeof foldWithOrigin>

/** The spans of a masked copy of the folded text, each with its text as written on the label. */
function spansOf(masked: string, { from, to }: Folded, label: string): Span[] {
  const spans: Span[] = []
  const cut = (start: number, end: number) => {
    const text = masked.slice(start, end).replace(PERCENT, (p) => ' '.repeat(p.length))
    const first = text.search(/\S/)
    if (first === -1) return
    const last = text.length - (text.length - text.trimEnd().length) - 1
    const [a, b] = [start + first, start + last]
    spans.push({ text: text.trim(), quoted: label.slice(from ? from[a] : a, to ? to[b] : b + 1) })
  }
  let start = 0
  for (const m of masked.matchAll(SPAN_BREAKS)) {
    // nothing between two breaks, no span (a blanked-out part cost a slice and three regexes a character)
    if (m.index > start) cut(start, m.index)
    start = m.index + m[0].length
  }
  cut(start, masked.length)
  return spans
}

const TRACE_TRIGGERS = data.trace_statements
  .map((t) => words(foldText(t)).join(' '))
  .sort((a, b) => b.length - a.length)
/**
 * The first trace trigger from `lastIndex` on: the leftmost, and of those starting there the longest
 * (the alternatives are tried in TRACE_TRIGGERS' order). One expression, compiled once: one per
 * trigger, compiled for every label, was most of the analysis's time.
 */
const TRACE_TRIGGER = new RegExp(`\\b(?:${TRACE_TRIGGERS.map((t) => t.replaceAll(' ', '\\s+')).join('|')})\\b`, 'g')

/**
 * Two copies of the folded text, aligned with it: the ingredient part with the trace statements
 * blanked out, and the trace part with everything else blanked out (a blank is a span break). A
 * trace statement runs from its trigger words ("may contain") to the end of the sentence.
 */
function separateTraces(folded: string): { ingredients: string; traces: string | null } {
  // [start, after) a trigger's words, [after, end) the statement it opens
  const statements: { start: number; after: number; end: number }[] = []
  for (let at = 0; at < folded.length; ) {
    TRACE_TRIGGER.lastIndex = at
    const m = TRACE_TRIGGER.exec(folded)
    if (!m) break
    const after = m.index + m[0].length
    const stop = folded.slice(after).search(/\.(?!\d)/)
    const end = stop === -1 ? folded.length : after + stop
    statements.push({ start: m.index, after, end })
    at = end + 1
  }
  // no trace statement: no trace part (all of it blanked out would be a break per character)
  if (statements.length === 0) return { ingredients: folded, traces: null }
  let ingredients = ''
  let traces = ''
  let at = 0
  for (const { start, after, end } of statements) {
    ingredients += folded.slice(at, start) + ';'.repeat(end - start)
    traces += ';'.repeat(after - at) + folded.slice(after, end)
    at = end
  }
  ingredients += folded.slice(at)
  traces += ';'.repeat(folded.length - at)
  return { ingredients, traces }
}

const CERTIFICATIONS = Object.entries(data.certifications).map(([slug, names]) => ({
  slug,
  patterns: names.map((n) => new RegExp(`\\b${words(foldText(n)).join('\\s+')}\\b`)),
}))
// EU organic control body codes (Regulation 2018/848): "FR-BIO-01", "DE-ÖKO-006", "ES-ECO-020-CV".
const EU_ORGANIC_CODE = /\b[a-z]{2}-(?:bio|oko|eko|eco|org|ekol|bio-org)-\d{2,3}\b/
// A national or EU organic label is an organic label.
const IMPLIES: Record<string, string> = { 'usda-organic': 'organic', 'eu-organic': 'organic' }

/**
 * Every certification's names in one expression: most texts name none, and one scan of the text
 * says so (each of the 38 names tested on its own was about a tenth of a feed chunk's analysis).
 * The names carry no flags, so a text matches this exactly when it matches one of them.
 */
const ANY_CERTIFICATION = new RegExp(
  [...CERTIFICATIONS.flatMap((c) => c.patterns), EU_ORGANIC_CODE].map((p) => `(?:${p.source})`).join('|'),
)

function certificationsOf(folded: string): string[] {
  if (!ANY_CERTIFICATION.test(folded)) return []
  const found = new Set(CERTIFICATIONS.filter((c) => c.patterns.some((p) => p.test(folded))).map((c) => c.slug))
  if (EU_ORGANIC_CODE.test(folded)) found.add('eu-organic')
  for (const slug of [...found]) if (IMPLIES[slug]) found.add(IMPLIES[slug])
  return [...found]
}

export function analyzeIngredients(given: string | null | undefined): IngredientAnalysis {
  // a product without ingredient text (a feed line with only label tags) is analysed as an empty
  // text: no allergens, no substances, rather than a throw that would stop the whole chunk
  const text = given ?? ''
  const folding = foldWithOrigin(text)
  const { ingredients, traces } = separateTraces(folding.folded)
  const inIngredients = spansOf(ingredients, folding, text).flatMap(matchSpan)
  const inTraces = traces === null ? [] : spansOf(traces, folding, text).flatMap(matchSpan)
  const allergens = (found: Found[]) =>
    [...new Set(found.map((f) => f.allergen).filter((a): a is string => a !== null))].sort()
  const substances = new Map<string, SubstanceMatch>()
  for (const f of inIngredients) {
    const seen = substances.get(f.slug)
    if (!seen || seen.confidence < f.confidence)
      substances.set(f.slug, { slug: f.slug, span: f.span, confidence: f.confidence })
  }
  return {
    contains: allergens(inIngredients),
    mayContain: allergens(inTraces),
    certifications: certificationsOf(folding.folded),
    substances: [...substances.values()],
  }
}

export const substanceCount = SUBSTANCES.length

/** The allergen slugs (contract §5: the EU's 14, which cover the US's 9). */
export const ALLERGENS = [...new Set(SUBSTANCES.flatMap((s) => (s.allergen ? [s.allergen] : [])))].sort()

const SLUGS = new Map<string, string>()
for (const s of SUBSTANCES) {
  SLUGS.set(s.slug, s.slug)
  if (s.name_slug) SLUGS.set(s.name_slug, s.slug)
  for (const e of s.e ?? []) SLUGS.set(e, e)
}

/**
 * The substance slug a caller means: a slug, an E-number, or the name id of an additive that goes by
 * its E-number (`sodium-nitrite` is `e250`); null when it names no known substance.
 */
export function substanceSlug(slug: string): string | null {
  return SLUGS.get(slug.toLowerCase()) ?? null
}

const ALLERGEN_SLUGS = new Set(ALLERGENS)
/** Open Food Facts' allergen ids that name one of ours under another word (its taxonomy's older ids). */
const ALLERGEN_SYNONYMS: Record<string, string> = {
  soy: 'soybeans',
  soja: 'soybeans',
  sesame: 'sesame-seeds',
  sulphites: 'sulphur-dioxide-and-sulphites',
  sulfites: 'sulphur-dioxide-and-sulphites',
  'tree-nuts': 'nuts',
  wheat: 'gluten',
  egg: 'eggs',
  lupine: 'lupin',
  crustacean: 'crustaceans',
  mollusc: 'molluscs',
}

/**
 * Allergen slugs of tags as feeds give them (`en:milk`, `fr:lait` is left: only the taxonomy's
 * English ids are slugs): the language prefix dropped, a tag that is not one of the 14 ignored.
 */
export function allergensOfTags(tags: string[]): string[] {
  const found = new Set<string>()
  for (const tag of tags) {
    const bare = tag.replace(/^[a-z]{2}:/i, '').toLowerCase()
    const slug = ALLERGEN_SLUGS.has(bare) ? bare : ALLERGEN_SYNONYMS[bare]
    if (slug) found.add(slug)
  }
  return [...found].sort()
}

export const CERTIFICATION_SLUGS = new Set([...CERTIFICATIONS.map((c) => c.slug), 'eu-organic'])

/** Every substance slug a caller may name: slugs, E-numbers and name ids (substanceSlug resolves them). */
export const SUBSTANCE_SLUGS = [...SLUGS.keys()].sort()

/**
 * Certification slugs of label tags as feeds give them (`en:fair-trade`, `en:fr-bio-01`,
 * `en:max-havelaar`): a tag that is a slug counts as itself; otherwise its words are read as label text.
 */
export function certificationsOfLabels(tags: string[]): string[] {
  const found = new Set<string>()
  for (const tag of tags) {
    const bare = tag.replace(/^[a-z]{2}:/i, '').toLowerCase()
    if (CERTIFICATION_SLUGS.has(bare)) found.add(bare)
    const folded = foldText(bare)
    for (const slug of certificationsOf(`${folded} ${folded.replace(/-/g, ' ')}`)) found.add(slug)
  }
  for (const slug of [...found]) if (IMPLIES[slug]) found.add(IMPLIES[slug])
  return [...found].sort()
}
