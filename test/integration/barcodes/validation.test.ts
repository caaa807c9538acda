import { describe, expect, test } from 'bun:test'
import { createKey, createOrganization, expectProblem } from '../../support/fixtures'
import { call } from '../../support/server'

const URL = '/products/api/v1/barcode/'
let key = ''
const send = async (body: Record<string, unknown>) => {
  key ||= (await createOrganization()).key
  return call('POST', URL, { key, body })
}

describe('barcode parameters', () => {
  test.each([
    ['module_width', 0.1, 0.09, 2, 2.01],
    ['module_height', 1, 0.99, 100, 100.01],
    ['font_size', 4, 3.99, 24, 24.01],
    ['quiet_zone', 0, -0.01, 20, 20.01],
    ['dpi', 72, 71, 1200, 1201],
  ])('%s: accepts %p and %p, rejects %p and %p', async (field, low, belowLow, high, aboveHigh) => {
    const base = { gtin: '4006381333931', format: field === 'dpi' ? 'png' : 'svg' }
    expect((await send({ ...base, [field]: low })).status).toBe(200)
    expect((await send({ ...base, [field]: high })).status).toBe(200)
    for (const bad of [belowLow, aboveHigh]) {
      const res = await send({ ...base, [field]: bad })
      expectProblem(res, 422, 'validation_error')
      expect(res.json.errors[0].field).toBe(field)
    }
  })

  test.each([
    ['barcode_type', 'qr'],
    ['format', 'gif'],
    ['write_text', 'yes'],
    ['embed_font', 1],
    ['dpi', 300.5],
    ['gtin', ''],
  ])('rejects %s = %p', async (field, value) => {
    const res = await send({ gtin: '4006381333931', [field]: value })
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors[0].field).toBe(field)
  })

  test('gtin is required; unknown fields are rejected; 401 without a key; readonly keys may generate', async () => {
    expectProblem(await send({ format: 'svg' }), 422, 'validation_error')
    expectProblem(await send({ gtin: '4006381333931', colour: 'red' }), 422, 'validation_error')
    expectProblem(await call('POST', URL, { body: { gtin: '4006381333931' } }), 401, 'unauthenticated')
    const org = await createOrganization()
    expect(
      (await call('POST', URL, { key: await createKey(org, 'readonly'), body: { gtin: '4006381333931' } })).status,
    ).toBe(200)
  })

  test.each([
    [
      'upce for a UPC-A that is not zero-suppressible',
      { gtin: '036000291452', barcode_type: 'upce' },
      /not zero-suppressible/,
    ],
    ['upce for a number system 2 UPC-A', { gtin: '212345678992', barcode_type: 'upce' }, /number system 0 or 1/],
    ['ean8 given 13 digits', { gtin: '4006381333931', barcode_type: 'ean8' }, /ean8 takes a GTIN-8/],
    ['ean13 given 8 digits', { gtin: '96385074', barcode_type: 'ean13' }, /GTIN-8/],
    ['ean13 given a GTIN-14 with indicator', { gtin: '10614141000415', barcode_type: 'ean13' }, /indicator digit 1/],
    ['jan outside 45/49', { gtin: '4006381333931', barcode_type: 'jan' }, /45 or 49/],
    ['upca given a GTIN-13 not starting with 0', { gtin: '4006381333931', barcode_type: 'upca' }, /GTIN-12/],
    ['itf14 given an AI string', { gtin: '(01)10614141000415', barcode_type: 'itf14' }, /use gs1_128/],
    ['gs1_128 with an unknown AI', { gtin: '(99999)123', barcode_type: 'gs1_128' }, /expected|unknown/],
    [
      'gs1_128 with a bad (01) check digit',
      { gtin: '(01)10614141000416', barcode_type: 'gs1_128' },
      /\(01\) GTIN has a wrong check digit/,
    ],
    ['gs1_128 with a short (01)', { gtin: '(01)1061414100041', barcode_type: 'gs1_128' }, /takes 14 characters/],
    ['gs1_128 with a bad date', { gtin: '(01)10614141000415(17)271399', barcode_type: 'gs1_128' }, /YYMMDD/],
    ['code39 in lower case', { gtin: 'hello', barcode_type: 'code39' }, /code39 takes/],
    ['code128 with a control character', { gtin: 'a\tb', barcode_type: 'code128' }, /printable ASCII/],
    ['auto with 9 digits', { gtin: '123456789' }, /auto needs 8, 12, 13 or 14 digits/],
  ])('422 with the reason: %s', async (_, body, reason) => {
    const res = await send(body)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.detail).toMatch(reason)
  })

  test('a wrong GTIN check digit is 422 invalid_gtin', async () => {
    const res = await send({ gtin: '4006381333932' })
    expectProblem(res, 422, 'invalid_gtin')
    expect(res.json.detail).toMatch(/should end in 1/)
  })
})
