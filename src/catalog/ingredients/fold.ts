// Folding a label's text for matching (analyze.ts): lower case, ligatures spelt out, accents and
// mark-up removed, E-numbers as one word, with each folded character's origin in the label.

const FOLD_LETTERS: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss', ø: 'o' }

/** One character folded: lower case, ligatures spelt out, accents and mark-up removed. */
function foldCharNow(char: string): string {
  const lower = char.toLowerCase()
  return (FOLD_LETTERS[lower] ?? lower)
    .normalize('NFKD')
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

const E_NUMBER = /\be[\s-]?(\d{3,4}[a-z]?)\b/g

/**
 * The folded text and, for each of its characters, where the character it came from starts and
 * ends in the label text, so a span found in the folded text is quoted as written.
 */
export function foldWithOrigin(text: string): { folded: string; from: number[]; to: number[] } {
  let folded = ''
  let from: number[] = []
  let to: number[] = []
  for (let i = 0; i < text.length; ) {
    const char = String.fromCodePoint(text.codePointAt(i)!)
    const out = foldChar(char)
    for (let k = 0; k < out.length; k++) {
      from.push(i)
      to.push(i + char.length)
    }
    folded += out
    i += char.length
  }
  // E-numbers as one word ("E 250" -> "e250"): drop the separator and its origin entries.
  const drop = new Set<number>()
  for (const m of folded.matchAll(E_NUMBER)) if (m[0].length === m[1]!.length + 2) drop.add(m.index + 1)
  if (drop.size > 0) {
    folded = folded
      .split('')
      .filter((_, i) => !drop.has(i))
      .join('')
    from = from.filter((_, i) => !drop.has(i))
    to = to.filter((_, i) => !drop.has(i))
  }
  return { folded, from, to }
}

/** Lower case without accents or mark-up; E-numbers as one word ("E 250" -> "e250"). */
export function foldText(text: string): string {
  return foldWithOrigin(text).folded
}

export const words = (text: string) => text.split(/[^a-z0-9]+/).filter(Boolean)
