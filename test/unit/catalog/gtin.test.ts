import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { expandUpcE, normalizeGtin, parseGtin, rangeProblem } from '../../../src/catalog/gtin'
import { AppError } from '../../../src/shared/errors'
import { gs1CheckDigit } from '../../../src/shared/gs1'

const withCheck = (body: string) => `${body}${gs1CheckDigit(body)}`
const rejection = (input: string) => {
  try {
    normalizeGtin(input)
  } catch (e) {
    expect(e).toBeInstanceOf(AppError)
    expect((e as AppError).code).toBe('invalid_gtin')
    return (e as AppError).message
  }
  throw new Error(`${input} was accepted`)
}

describe('GTIN normalisation', () => {
  test.each([
    ['GTIN-8 (EAN-8)', '96385074', '00000096385074'],
    ['GTIN-12 (UPC-A)', '036000291452', '00036000291452'],
    ['GTIN-13 (EAN-13)', '4006381333931', '04006381333931'],
    ['GTIN-13 with leading 0', '0071464240608', '00071464240608'],
    ['GTIN-14', '10614141000415', '10614141000415'],
    ['GTIN-14 variable measure (indicator 9)', '94006381333934', '94006381333934'],
    ['ISBN (978)', '9780306406157', '09780306406157'],
    ['spaces', '0 41303 00195 0', '00041303001950'],
    ['hyphens', '4006-3813-3393-1', '04006381333931'],
    ['dots', '4006.381.333.931', '04006381333931'],
    ['surrounding whitespace', '  036000291452\n', '00036000291452'],
    ['UPC-E (d6 = 1)', '04252614', '00042100005264'],
  ])('%s: %s -> %s', (_, input, expected) => {
    expect(normalizeGtin(input)).toBe(expected)
  })

  test('the GTIN-14 vector of the spec table is valid as given', () => {
    expect(withCheck('1061414100041')).toBe('10614141000415')
  })

  test.each([
    ['0', '01234505', '012000003455'], // d6 in 0-2
    ['3', '01234531', '012300000451'],
    ['4', '01234543', '012340000053'],
    ['5-9', '01234572', '012345000072'],
  ])('UPC-E expansion, last digit %s', (_, upce, upca) => {
    expect(expandUpcE(upce)).toBe(upca)
    expect(parseGtin(upce)).toEqual({ gtin14: `00${upca}`, kind: 'upce' })
  })

  test.each([
    ['7 digits', '1234567', /8, 12, 13 or 14 digits; got 7/],
    ['9 digits', '123456789', /got 9/],
    ['11 digits', '25000044984', /got 11/],
    ['15 digits', '123456789012345', /got 15/],
    ['letters', '4006381A33931', /only digits/],
    ['empty', '', /required/],
    ['only separators', ' - . ', /required/],
    ['GTIN-8 check digit', '96385075', /wrong check digit: 96385075 should end in 4/],
    ['GTIN-12 check digit', '036000291453', /should end in 2/],
    ['GTIN-13 check digit', '4006381333932', /should end in 1/],
    ['GTIN-14 check digit', '10614141000416', /should end in 5/],
  ])('rejects %s', (_, input, why) => {
    expect(rejection(input)).toMatch(why)
  })

  test.each([
    ['RCN-8, prefix 2', withCheck('2628174'), /RCN-8/],
    ['RCN-8, prefix 0 (not a UPC-E)', '00000000', /RCN-8|check digit/],
    ['UPC number system 2 (random weight)', withCheck('21234567890'), /restricted circulation/],
    ['UPC number system 4 (in-store)', withCheck('41234567890'), /within a company/],
    ['UPC number system 5 (coupon)', withCheck('51234567890'), /coupon/],
    ['GS1 prefix 020-029', withCheck('022345678901'), /restricted circulation/],
    ['GS1 prefix 200-299', withCheck('250123456789'), /restricted circulation/],
    ['GS1 prefix 040-049', withCheck('045123456789'), /within a company/],
    ['refund receipt 980', withCheck('980123456789'), /refund receipt/],
    ['coupon 981-984', withCheck('982123456789'), /coupon/],
    ['coupon 99x', withCheck('991234567890'), /coupon/],
    ['restricted inside a GTIN-14', withCheck('1250123456789'), /restricted circulation/],
  ])('rejects %s with its reason', (_, input, why) => {
    expect(rejection(input)).toMatch(why)
  })

  test('normalisation is idempotent (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{7}$|^\d{11}$|^\d{12}$|^\d{13}$/), (body) => {
        const gtin = withCheck(body)
        const once = parseGtin(gtin).gtin14
        expect(once).toHaveLength(14)
        expect(parseGtin(once).gtin14).toBe(once)
      }),
      { numRuns: 500 },
    )
  })

  test('any single-digit change breaks the check digit (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\d{13}$/),
        fc.nat(13),
        fc.integer({ min: 1, max: 9 }),
        (body, position, delta) => {
          const gtin = withCheck(body)
          const digit = (Number(gtin[position]) + delta) % 10
          const changed = gtin.slice(0, position) + digit + gtin.slice(position + 1)
          expect(() => parseGtin(changed)).toThrow(/check digit/)
        },
      ),
      { numRuns: 1000 },
    )
  })

  test('an 8-digit code that checks only as UPC-E is expanded, unless the source means EAN-8', () => {
    // 04083637 (Régilait in the Open Food Facts sample) has a bad GTIN-8 check digit but is a valid UPC-E
    expect(parseGtin('04083637')).toEqual({ gtin14: '00040800000367', kind: 'upce' })
    expect(() => parseGtin('04083637', { allowUpcE: false })).toThrow(/wrong check digit: 04083637 should end in 4/)
    expect(parseGtin('96385074', { allowUpcE: false }).kind).toBe('gtin8')
  })

  test('rangeProblem is null for ordinary trade items', () => {
    for (const g of ['00036000291452', '04006381333931', '09780306406157', '00000096385074'])
      expect(rangeProblem(g)).toBeNull()
  })
})
