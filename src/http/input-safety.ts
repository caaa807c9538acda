import type { FieldError } from '../shared/errors'

/** How deep JSON bodies may nest arrays and objects. */
export const MAX_DEPTH = 32

/** Whether JSON text nests deeper than `max`, found by a scan (before parsing, which would recurse). */
export function nestsDeeper(text: string, max = MAX_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** Why a text cannot be stored as given: a NUL (PostgreSQL refuses it) or a lone surrogate. */
export function textProblem(text: string, field: string): FieldError | null {
  if (text.includes('\0')) return { field, message: 'must not contain a NUL character' }
  if (!text.isWellFormed()) return { field, message: 'must be well-formed Unicode (it has a lone surrogate)' }
  return null
}

/**
 * Keys that name members of every JavaScript object: `__proto__` would be dropped, and the others
 * break code that turns an object into text (the validator's own error messages among them).
 */
const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * The first place in a parsed JSON body that cannot be taken as given: a string or key with a NUL
 * or a lone surrogate, or a key that names a member of every object (`__proto__`, `toString`, `constructor`, …).
 */
export function unsafeValue(value: unknown, path = ''): FieldError | null {
  if (typeof value === 'string') return textProblem(value, path || 'body')
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsafeValue(value[i], `${path}[${i}]`)
      if (found) return found
    }
    return null
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key
      if (RESERVED.has(key)) return { field: at, message: 'is a reserved name' }
      const found = textProblem(key, at) ?? unsafeValue(item, at)
      if (found) return found
    }
  }
  return null
}

/** A query parameter's name or value (or a path segment) decoded; most are plain text, returned as they are. */
export function decodeComponent(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw
  return decodeURIComponent(raw.replaceAll('+', ' '))
}

/** The first query parameter (or path segment) that does not decode to safe text. */
export function unsafeComponent(raw: string, field: string): FieldError | null {
  let text: string
  try {
    text = decodeComponent(raw)
  } catch {
    return { field, message: 'is not valid percent-encoded UTF-8' }
  }
  return textProblem(text, field)
}
