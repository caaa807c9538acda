/**
 * A value's JSON text with every object's keys in the order PostgreSQL's jsonb keeps them (shorter
 * keys first, then by their bytes), whatever order the object was built in; `undefined` members are
 * left out, as JSON.stringify leaves them. A hash of this text is the same for a value written by
 * our code and for the same value read back from a jsonb column (feed records' content hashes were
 * computed on records read back from jsonb until migration 0040, and must still match).
 */
export function jsonInJsonbOrder(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : jsonInJsonbOrder(v))).join(',')}]`
  const object = value as Record<string, unknown>
  const keys = Object.keys(object).filter((k) => object[k] !== undefined)
  keys.sort(jsonbKeyOrder)
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jsonInJsonbOrder(object[k])}`).join(',')}}`
}

/** jsonb's order of an object's keys: by length in bytes, then byte by byte (UTF-8: by code point). */
function jsonbKeyOrder(a: string, b: string): number {
  const bytes = Buffer.byteLength(a) - Buffer.byteLength(b)
  if (bytes !== 0 || a === b) return bytes
  // UTF-16 code units order as code points (and so as UTF-8 bytes) except surrogates against
  // U+E000-U+FFFF: compared by code point where they differ
  for (let i = 0; ; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return (a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0)
  }
}
