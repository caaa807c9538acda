import { describe, expect, test } from 'bun:test'
import {
  aiRule,
  aiValueProblem,
  applicationIdentifiers,
  digitalLinkQualifiers,
  parseAiString,
} from '../../../src/shared/application-identifiers'

describe('GS1 Application Identifiers (one table for barcodes and the resolver)', () => {
  test('the full set: GS1 toolkit table plus the AIs added since', () => {
    const ais = new Set(applicationIdentifiers().map((r) => r.ai))
    expect(ais.size).toBeGreaterThan(500)
    for (const ai of ['00', '01', '10', '21', '22', '253', '414', '3103', '3925', '7003', '8003', '8200', '99'])
      expect(ais.has(ai)).toBe(true)
    for (const ai of ['235', '4300', '4309', '4333', '7011', '7040', '7240', '8030', '3955'])
      expect(ais.has(ai)).toBe(true)
    expect(aiRule('4307')).toMatchObject({ title: 'SHIP TO COUNTRY', format: 'X2' })
  })

  test('values: length, character set, check digits (last or fixed position), dates', () => {
    expect(aiValueProblem('01', '09501101530003')).toBeNull()
    expect(aiValueProblem('01', '09501101530004')).toMatch(/check digit/)
    expect(aiValueProblem('01', '9501101530003')).toMatch(/takes 14 characters/)
    expect(aiValueProblem('10', 'LOT-7/A')).toBeNull()
    expect(aiValueProblem('10', 'L'.repeat(21))).toMatch(/1-20 characters/)
    expect(aiValueProblem('10', 'a b')).toMatch(/set 82/)
    expect(aiValueProblem('8003', '04012345111118988')).toBeNull() // GRAI: check digit at 14, serial after
    expect(aiValueProblem('8003', '04012345111119988')).toMatch(/check digit/)
    expect(aiValueProblem('17', '251231')).toBeNull()
    expect(aiValueProblem('17', '251301')).toMatch(/YYMMDD/)
    expect(aiValueProblem('8030', 'aB-_=')).toBeNull()
    expect(aiValueProblem('8030', 'a+b')).toMatch(/set 64/)
    expect(aiValueProblem('4330', '001234-')).toBeNull()
    expect(aiValueProblem('123', '1')).toMatch(/unknown/)
  })

  test('element strings and Digital Link qualifiers', () => {
    expect(parseAiString('(01)09501101530003(10)ABC(235)TPX1')).toEqual({
      elements: [
        { ai: '01', value: '09501101530003' },
        { ai: '10', value: 'ABC' },
        { ai: '235', value: 'TPX1' },
      ],
    })
    expect(parseAiString('(99999)1')).toEqual({ problem: 'expected "(AI)value" at position 1' })
    expect(digitalLinkQualifiers('01')).toEqual([['22', '10', '21'], ['235']])
    expect(digitalLinkQualifiers('414')).toEqual([['254'], ['7040']])
    expect(digitalLinkQualifiers('00')).toEqual([])
  })
})
