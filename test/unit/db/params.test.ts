import { describe, expect, test } from 'bun:test'
import { PgDialect } from 'drizzle-orm/pg-core'
// pg's own conversion of a parameter: what PostgreSQL received before arrayLiteral
// @ts-expect-error pg's lib/utils has no type declarations
import { prepareValue } from 'pg/lib/utils'
import { arrayLiteral, columnParam } from '../../../src/db/params'

describe('arrayLiteral: the array literal pg would write', () => {
  const awkward = [
    'plain',
    '',
    ' ',
    '  leading and trailing  ',
    'say "cheese"',
    'back\\slash',
    '\\"',
    '"',
    '\\',
    '{braces}',
    '}',
    'a,b',
    'NULL',
    'null',
    'tab\there',
    'new\nline',
    'Mi Costeñita',
    'Huile d’olive',
    '日本語のテキスト',
    '🍫 chocolate',
    '{"a": [1, "b\\\\c"]}',
  ]

  test('strings, one by one and all together, with nulls between', () => {
    for (const s of awkward) expect(arrayLiteral([s])).toBe(prepareValue([s]))
    const mixed = awkward.flatMap((s) => [s, null])
    expect(arrayLiteral(mixed)).toBe(prepareValue(mixed))
    expect(arrayLiteral([null, undefined, null])).toBe(prepareValue([null, undefined, null]))
  })

  test('numbers, big integers, booleans, ids and the empty array', () => {
    const values = [0, -0, 1, -17, 3.25, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, 10n ** 20n, true, false]
    expect(arrayLiteral(values)).toBe(prepareValue(values))
    const ids = Array.from({ length: 50 }, () => crypto.randomUUID())
    expect(arrayLiteral(ids)).toBe(prepareValue(ids))
    expect(arrayLiteral([])).toBe(prepareValue([]))
    expect(arrayLiteral([])).toBe('{}')
  })

  test('random strings of the awkward characters agree with pg', () => {
    const alphabet = ['a', 'é', ' ', '"', '\\', '{', '}', ',', '\t', '€', '😀', 'N', 'U', 'L']
    for (let i = 0; i < 500; i++) {
      const list = Array.from({ length: 1 + (i % 7) }, (_, k) =>
        (i + k) % 5 === 0
          ? null
          : Array.from({ length: (i * 7 + k) % 12 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join(
              '',
            ),
      )
      expect(arrayLiteral(list)).toBe(prepareValue(list))
    }
  })

  test('an element pg converts otherwise (a date, an object, a nested array) is left to pg', () => {
    expect(arrayLiteral(['a', new Date(0)])).toBeNull()
    expect(arrayLiteral([{ a: 1 }])).toBeNull()
    expect(arrayLiteral([['a']])).toBeNull()
    expect(arrayLiteral([new Uint8Array([1])])).toBeNull()
  })
})

describe('columnParam: each row read once', () => {
  test('a column the literal gives up on (a date) is read once per row, and pg gets every value', () => {
    const rows = [{ v: 'a' }, { v: 'b' }, { v: new Date(0) }, { v: 'd' }]
    const reads: number[] = []
    const param = columnParam(
      rows,
      (row) => {
        reads.push(rows.indexOf(row))
        return row.v
      },
      'text',
    )
    expect(reads).toEqual([0, 1, 2, 3])
    const { params } = new PgDialect().sqlToQuery(param)
    expect(params).toEqual([['a', 'b', new Date(0), 'd']])
  })

  test('a column of plain values goes as its literal', () => {
    const { sql, params } = new PgDialect().sqlToQuery(columnParam([{ v: 'x"y' }, { v: null }], (r) => r.v, 'text'))
    expect(params).toEqual(['{"x\\"y",NULL}'])
    expect(sql).toBe('$1::text[]')
  })
})
