import { t } from 'elysia'

/**
 * A closed set of strings. Not `t.UnionEnum`: Elysia gives that a default of its first value,
 * so an omitted optional field would silently take it.
 */
export const Enum = <const V extends string>(values: readonly V[], options: { description?: string } = {}) =>
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
