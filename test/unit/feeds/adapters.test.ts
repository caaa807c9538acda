import { describe, expect, test } from 'bun:test'
import { Readable } from 'node:stream'
import { parsePrice } from '../../../src/feeds/adapters/affiliate'
import { parseQuantity, quantityOf } from '../../../src/feeds/adapters/quantity'
import { readFeedCode, unshout } from '../../../src/feeds/adapters/record'
import { jsonArrayItems } from '../../../src/feeds/adapters/usda'

// The adapters' parsing rules, on the forms the sample files hold (see test/fixtures/feeds).
describe('net content', () => {
  test.each([
    ['1.75 l', 1750, 'MLT'],
    ['75 cl', 750, 'MLT'],
    ['1000 ml', 1000, 'MLT'],
    ['150g', 150, 'GRM'],
    ['4.7 oz (133 g)', 133, 'GRM'],
    ['12 fl oz (355 ml)', 355, 'MLT'],
    ['46 fl oz (1.36 L)', 1360, 'MLT'],
    ['1/2 gal (1.89 L)', 1890, 'MLT'],
    ['5 x 40 g', 200, 'GRM'],
    ['6 x 25 cl', 1500, 'MLT'],
    ['10 x 1.23 oz (35 g)', 350, 'GRM'],
    ['57 g/2 oz', 57, 'GRM'],
    ['2 oz', 56.7, 'GRM'],
    ['1 lb', 453.59, 'GRM'],
  ])('%s → %d %s', (text, value, uom) => {
    expect(parseQuantity(text)).toEqual({ value, uom: uom as 'GRM' })
  })
  test('nothing readable is null; a numeric product_quantity with its unit', () => {
    expect(parseQuantity('a bag')).toBeNull()
    // items counted (issue 45): the count in the spec's unit EA, whatever the language
    for (const text of ['1 pièce', '1 Pièce', '1 piece', '1 pcs', '1 count', '1 ct'])
      expect(parseQuantity(text)).toEqual({ value: 1, uom: 'EA' })
    expect(parseQuantity('12 pcs')).toEqual({ value: 12, uom: 'EA' })
    expect(parseQuantity('6 x 2 pièces')).toEqual({ value: 12, uom: 'EA' })
    expect(parseQuantity('4 pièces (200 g)')).toEqual({ value: 200, uom: 'GRM' })
    expect(parseQuantity('')).toBeNull()
    expect(quantityOf('500', 'g')).toEqual({ value: 500, uom: 'GRM' })
    expect(quantityOf(1.5, 'l')).toEqual({ value: 1500, uom: 'MLT' })
    expect(quantityOf(500, undefined)).toBeNull()
  })
})

describe('codes as feeds write them', () => {
  test('readings, repairs and refusals', () => {
    expect(readFeedCode('25000044984')).toEqual({ gtin14: '00025000044984', reading: 'upca_leading_zero_restored' })
    expect(readFeedCode('04083637')).toEqual({ gtin14: '00040800000367', reading: 'upce' })
    expect(readFeedCode('0 41303 00195 0')).toEqual({ gtin14: '00041303001950', reading: 'gtin12' })
    expect(readFeedCode(3256220513173)).toEqual({ gtin14: '03256220513173', reading: 'gtin13' })
    expect(() => readFeedCode('26281742')).toThrow('restricted circulation')
    expect(() => readFeedCode('36613446535732')).toThrow('wrong check digit')
    expect(() => readFeedCode('4083637')).toThrow('8, 12, 13 or 14 digits')
    expect(() => readFeedCode(undefined)).toThrow('no product code')
  })
})

test('prices and names', () => {
  expect(parsePrice('3.49 USD')).toEqual({ amount: '3.49', currency: 'USD' })
  expect(parsePrice('1,89 EUR')).toEqual({ amount: '1.89', currency: 'EUR' })
  expect(parsePrice('EUR 12')).toEqual({ amount: '12', currency: 'EUR' })
  expect(() => parsePrice('3.49')).toThrow()
  expect(() => parsePrice('USD 3.49 EUR')).toThrow()
  expect(unshout('SIMPLY LEMONADE')).toBe('Simply Lemonade')
  expect(unshout('MI COSTENITA')).toBe('Mi Costenita')
  expect(unshout('Sprite')).toBe('Sprite')
})

test('JSON array items are streamed across chunk boundaries, strings and nesting respected', async () => {
  const doc = JSON.stringify({ BrandedFoods: [{ a: '}{"[', b: [1, { c: 2 }] }, { d: 'x\\"y' }] })
  const chunks = doc.match(/.{1,3}/gs)!
  const items: string[] = []
  for await (const item of jsonArrayItems(Readable.from(chunks.map((c) => Buffer.from(c))))) items.push(item)
  expect(items.map((i) => JSON.parse(i))).toEqual([{ a: '}{"[', b: [1, { c: 2 }] }, { d: 'x\\"y' }])
  const truncated = Readable.from([Buffer.from(doc.slice(0, 30))])
  await expect(
    (async () => {
      for await (const _ of jsonArrayItems(truncated));
    })(),
  ).rejects.toThrow('truncated')
})
