import { Kind, TypeRegistry } from '@sinclair/typebox'
import { t } from 'elysia'

/**
 * A closed set of strings. Not `t.UnionEnum`: Elysia gives that a default of its first value,
 * so an omitted optional field would silently take it.
 */
export const Enum = <const V extends string>(
  values: readonly V[],
  options: { description?: string; 'x-field'?: string } = {},
) =>
  t.Unsafe<V>(
    t.Union(
      values.map((v) => t.Literal(v)),
      options,
    ),
  )

/**
 * An integer query parameter. Elysia's query coercion reports failures without the parameter's
 * name, so the schema carries it (`x-field`) for the error mapper.
 */
export const QueryInteger = (
  field: string,
  options: { minimum?: number; maximum?: number; default?: number; description?: string },
) => t.Integer({ ...options, 'x-field': field })

/** Number of characters (code points) of a text, not of UTF-16 units: an emoji counts once. */
export function charCount(text: string, stopAfter = Number.POSITIVE_INFINITY): number {
  let n = 0
  for (const _ of text) if (++n > stopAfter) break
  return n
}

const patterns = new Map<string, RegExp>()
TypeRegistry.Set('Chars', (schema: { minLength?: number; maxLength: number; pattern?: string }, value) => {
  if (typeof value !== 'string') return false
  const n = charCount(value, schema.maxLength)
  if (n > schema.maxLength || n < (schema.minLength ?? 0)) return false
  if (schema.pattern === undefined) return true
  let pattern = patterns.get(schema.pattern)
  if (!pattern) {
    pattern = new RegExp(schema.pattern)
    patterns.set(schema.pattern, pattern)
  }
  return pattern.test(value)
})

/**
 * A string whose length limits count characters (code points), as PostgreSQL's varchar does:
 * TypeBox's maxLength counts UTF-16 units, so a name of 255 emoji would be refused at 128.
 * It reads as a plain string with minLength/maxLength in the OpenAPI document.
 */
export const Chars = (
  maxLength: number,
  options: { minLength?: number; pattern?: string; error?: string; description?: string; default?: string } = {},
) => t.Unsafe<string>({ [Kind]: 'Chars', type: 'string', maxLength, ...options })
