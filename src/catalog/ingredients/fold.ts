// Folding a label's text for matching (analyze.ts): lower case, ligatures spelt out, accents and
// mark-up removed, E-numbers as one word, with each folded character's origin in the label.

const FOLD_LETTERS: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss', ø: 'o' }

/** One character folded: lower case, ligatures spelt out, accents and mark-up removed. */
function foldCharNow(char: string): string {
  const lower = char.toLowerCase()
  // lower case again after the decomposition: a compatibility character with no lower case of its
  // own decomposes to a capital (𝐋, a mathematical capital, to L), which no name would match
  return (FOLD_LETTERS[lower] ?? lower)
    .normalize('NFKD')
    .toLowerCase()
    .replace(/\p{M}/gu, '')
    .replace(/[_'’`´^*+#&]/g, ' ')
}

/**
 * foldCharNow, remembered per character: a label's characters are few and repeat (folding each anew
 * was a quarter of a feed chunk's ingredient analysis: a lower-casing, a normalisation and two
 * replacements per character). Bounded: past FOLDED_MAX characters, the rarest are folded each time.
 */
const folds = new Map<string, string>()
const FOLDED_MAX = 10_000
function foldChar(char: string): string {
  let out = folds.get(char)
  if (out === undefined) {
    out = foldCharNow(char)
    if (folds.size < FOLDED_MAX) folds.set(char, out)
  }
  return out
}

/** foldCharNow of each ASCII character, by its code: most of a label's characters, looked up by index. */
const ASCII_FOLDS = Array.from({ length: 128 }, (_, code) => foldCharNow(String.fromCharCode(code)))

const E_NUMBER = /\be[\s-]?(\d{3,4}[a-z]?)\b/g

/** The places 0…n-1 plus `shift`: the origins (0) or ends (1) of n characters that are their own. */
const ownPlaces = (n: number, shift: 0 | 1) => Array.from({ length: n }, (_, k) => k + shift)

/**
 * The folded text and, for each of its characters, where the character it came from starts and
 * ends in the label text, so a span found in the folded text is quoted as written. `from` and `to`
 * are null when the folded text's every character came from the label's character at the same
 * place (the usual label: each character folds to one, none outside the BMP, no E-number joined):
 * the place is its own origin, and no two arrays of the text's length are made.
 */
export function foldWithOrigin(text: string): { folded: string; from: number[] | null; to: number[] | null } {
  let folded = ''
  let from: number[] | null = null
  let to: number[] | null = null
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i)
    // an ASCII character folds to one character (a table's), anything else through foldChar
    const char = code < 128 ? null : String.fromCodePoint(text.codePointAt(i)!)
    const out = char === null ? ASCII_FOLDS[code]! : foldChar(char)
    const next = i + (char === null ? 1 : char.length)
    if (from === null && (out.length !== 1 || next !== i + 1)) {
      // the first character that is not its own origin: the places so far are
      from = ownPlaces(folded.length, 0)
      to = ownPlaces(folded.length, 1)
    }
    if (from !== null)
      for (let k = 0; k < out.length; k++) {
        from.push(i)
        to!.push(next)
      }
    folded += out
    i = next
  }
  // E-numbers as one word ("E 250" -> "e250"): drop the separator and its origin entries.
  const drop = new Set<number>()
  for (const m of folded.matchAll(E_NUMBER)) if (m[0].length === m[1]!.length + 2) drop.add(m.index + 1)
  if (drop.size > 0) {
    const origins = from ?? ownPlaces(folded.length, 0)
    const ends = to ?? ownPlaces(folded.length, 1)
    folded = folded
      .split('')
      .filter((_, i) => !drop.has(i))
      .join('')
    from = origins.filter((_, i) => !drop.has(i))
    to = ends.filter((_, i) => !drop.has(i))
  }
  return { folded, from, to }
}

/** Lower case without accents or mark-up; E-numbers as one word ("E 250" -> "e250"). */
export function foldText(text: string): string {
  return foldWithOrigin(text).folded
}

/**
 * The words of a folded text: its runs of a-z and 0-9 (what `text.split(/[^a-z0-9]+/)` keeps that is
 * not empty), read in one pass over the character codes: the split and the filter of empty strings
 * was a tenth of an analysis.
 */
export function words(text: string): string[] {
  const found: string[] = []
  let start = -1
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0
    const inWord = (c >= 97 && c <= 122) || (c >= 48 && c <= 57)
    if (inWord) {
      if (start === -1) start = i
    } else if (start !== -1) {
      found.push(text.slice(start, i))
      start = -1
    }
  }
  return found
}
