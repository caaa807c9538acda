import { describe, expect, test } from 'bun:test'
import { decodeFile } from '../../support/decode'
import { createOrganization } from '../../support/fixtures'
import { baseUrl } from '../../support/server'

const BARCODE = '/products/api/v1/barcode/'

async function barcode(key: string, body: Record<string, unknown>) {
  const res = await fetch(baseUrl + BARCODE, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  })
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

// input, barcode_type, what an independent decoder must read
const SYMBOLS: [string, string, string][] = [
  ['4006381333931', 'ean13', '4006381333931'],
  ['96385074', 'ean8', '96385074'],
  ['4901234567894', 'jan', '4901234567894'],
  ['036000291452', 'upca', '036000291452'],
  ['04252614', 'upce', '04252614'],
  ['10614141000415', 'itf14', '10614141000415'],
  ['10614141000415', 'ean14', '0110614141000415'],
  ['CATALOG-128', 'code128', 'CATALOG-128'],
  ['(01)10614141000415(17)271231(10)LOT42', 'gs1_128', '01106141410004151727123110LOT42'],
  ['CODE 39-A', 'code39', 'CODE 39-A'],
  ['4006381333931', 'auto', '4006381333931'],
  ['(01)10614141000415', 'auto', '0110614141000415'],
]
const FORMATS = ['svg', 'png', 'pdf', 'eps'] as const
const GS = String.fromCharCode(29) // GS1 group separator after variable-length AIs
const TYPES: Record<string, string> = {
  svg: 'image/svg+xml',
  png: 'image/png',
  pdf: 'application/pdf',
  eps: 'application/postscript',
}

describe('every symbology in every format decodes to its input (zbarimg, resvg, pdftoppm, Ghostscript)', () => {
  let key = ''
  const keyOf = async () => (key ||= (await createOrganization()).key)
  for (const [input, type, expected] of SYMBOLS)
    for (const format of FORMATS)
      test(`${type} ${input} as ${format}`, async () => {
        const res = await barcode(await keyOf(), { gtin: input, barcode_type: type, format })
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe(TYPES[format]!)
        expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^inline; filename="[^"]+\\.${format}"$`))
        const decoded = decodeFile(res.bytes, format).map((s) => s.replaceAll(GS, ''))
        expect(decoded).toEqual([expected])
      })

  test('SVG without embedded font (font-family OCR-B) still decodes', async () => {
    const res = await barcode(await keyOf(), { gtin: '4006381333931', format: 'svg', embed_font: false })
    expect(decodeFile(res.bytes, 'svg')).toEqual(['4006381333931'])
  })

  test('small modules at high dpi and large modules at low dpi decode', async () => {
    const k = await keyOf()
    expect(
      decodeFile(
        (await barcode(k, { gtin: '4006381333931', format: 'png', module_width: 0.2, dpi: 1200 })).bytes,
        'png',
      ),
    ).toEqual(['4006381333931'])
    expect(
      decodeFile((await barcode(k, { gtin: '4006381333931', format: 'png', module_width: 1, dpi: 72 })).bytes, 'png'),
    ).toEqual(['4006381333931'])
  })
})
