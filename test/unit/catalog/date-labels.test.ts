import { describe, expect, test } from 'bun:test'
import { dateLabelCompliance, findDateLabelPhrases } from '../../../src/catalog/date-labels'

describe('date-label compliance (California AB 660)', () => {
  test.each([
    'Sell by 12/05',
    'SELL BY',
    'sell-by date on lid',
    'Sell  By: see top',
    'sell\tby',
    'Sell—by (see cap)',
    'SELL.BY',
  ])('"sell by" variant is found: %s', (text) => {
    expect(findDateLabelPhrases(text).map((p) => p.phrase)).toEqual(['sell by'])
  })

  test.each([
    ['Best By 2027', 'best by'],
    ['best before end: see base', 'best before'],
    ['Enjoy by the date shown', 'enjoy by'],
    ['Freshest-by date', 'freshest by'],
    ['Expires on 01/01', 'expires on'],
    ['DISPLAY UNTIL Friday', 'display until'],
    ['Pull by date', 'pull by'],
    ['Use before opening date', 'use before'],
  ])('non-uniform phrase found: %s', (text, phrase) => {
    expect(findDateLabelPhrases(text).map((p) => p.phrase)).toContain(phrase)
  })

  test.each([
    'BEST if Used by 06/2027',
    'Best if used by',
    'best if used by',
    'BEST IF USED BY',
    'BEST if Used or Frozen by 2027-01-01',
    'USE by 12 MAR',
    'Use by or Freeze by: see lid',
    'BB 12/26',
    'UB 03/27',
    'Refrigerate after opening. Used by chefs worldwide.',
    'Bestseller by far',
    'Best buy of the year',
  ])('allowed wording is never flagged: %s', (text) => {
    expect(findDateLabelPhrases(text)).toEqual([])
  })

  test('compliance object names field and phrase; federal is unknown', () => {
    expect(dateLabelCompliance({ product_name: 'Oats', description: 'BEST if Used by June' })).toEqual({
      ca_ab660: 'compliant',
      federal: 'unknown',
      notes: [],
    })
    const bad = dateLabelCompliance({
      product_name: 'Milk',
      net_content: '1 l',
      usage_instructions: 'Sell-by: see cap',
    })
    expect(bad.ca_ab660).toBe('non_compliant')
    expect(bad.federal).toBe('unknown')
    expect(bad.notes).toHaveLength(1)
    expect(bad.notes[0]).toStartWith('usage_instructions: prohibited date label "sell by"')
  })
})
