import { expandUpcE, parseGtin } from '../catalog/gtin'
import { parseAiString } from '../shared/application-identifiers'
import { AppError } from '../shared/errors'

export const BARCODE_TYPES = [
  'auto',
  'ean13',
  'ean8',
  'jan',
  'upca',
  'upce',
  'itf14',
  'ean14',
  'code128',
  'gs1_128',
  'code39',
] as const
export type BarcodeType = (typeof BARCODE_TYPES)[number]

/** What is drawn: the bwip-js encoder, its input, the resolved type and how text is laid out. */
export type BarcodeSymbol = {
  type: Exclude<BarcodeType, 'auto'>
  bcid: string
  text: string
  /** digits in EAN/UPC positions, or one centred line */
  layout: 'ean13' | 'ean8' | 'upca' | 'upce' | 'centred'
  human: string
  /** a name for files: the GTIN-14 where there is one */
  fileName: string
}

const reject = (reason: string) => new AppError('validation_error', reason, [{ field: 'gtin', message: reason }])
const digitsOf = (input: string) => input.trim().replace(/[\s.-]/g, '')

/** The UPC-E of a UPC-A, or why it has none (only number systems 0/1 with enough zeros compress). */
export function compressUpcA(upca: string): string | { problem: string } {
  if (!/^[01]\d{11}$/.test(upca)) return { problem: 'only a UPC-A with number system 0 or 1 can be zero-suppressed' }
  const ns = upca[0]
  const m = upca.slice(1, 6)
  const p = upca.slice(6, 11)
  const check = upca[11]
  let body: string | null = null
  if (/^[012]$/.test(m[2]!) && m.slice(3) === '00' && p.startsWith('00')) body = `${m.slice(0, 2)}${p.slice(2)}${m[2]}`
  else if (m.slice(3) === '00' && p.startsWith('000')) body = `${m.slice(0, 3)}${p.slice(3)}3`
  else if (m[4] === '0' && p.startsWith('0000')) body = `${m.slice(0, 4)}${p[4]}4`
  else if (p.startsWith('0000') && /[5-9]/.test(p[4]!)) body = `${m}${p[4]}`
  if (!body)
    return {
      problem: `UPC-A ${upca} is not zero-suppressible (its manufacturer and item numbers lack the zeros UPC-E drops)`,
    }
  const upce = `${ns}${body}${check}`
  return expandUpcE(upce) === upca ? upce : { problem: `UPC-A ${upca} is not zero-suppressible` }
}

/** Resolves `barcode_type` for the input, or 422 with the reason the type cannot carry it. */
export function resolveSymbol(input: string, requested: BarcodeType): BarcodeSymbol {
  const trimmed = input.trim()
  const isAi = trimmed.startsWith('(')
  let type = requested
  if (type === 'auto') {
    if (isAi) type = 'gs1_128'
    else {
      const n = digitsOf(trimmed).length
      const byLength: Record<number, BarcodeSymbol['type']> = { 8: 'ean8', 12: 'upca', 13: 'ean13', 14: 'itf14' }
      const picked = /^\d+$/.test(digitsOf(trimmed)) ? byLength[n] : undefined
      if (!picked)
        throw reject(
          `auto needs 8, 12, 13 or 14 digits, or an AI-bracketed string like (01)…; got "${trimmed.slice(0, 40)}"`,
        )
      type = picked
    }
  }
  switch (type) {
    case 'code128': {
      if (!/^[\x20-\x7e]{1,80}$/.test(trimmed)) throw reject('code128 takes 1-80 printable ASCII characters')
      return { type, bcid: 'code128', text: trimmed, layout: 'centred', human: trimmed, fileName: safeName(trimmed) }
    }
    case 'code39': {
      if (!/^[0-9A-Z\-. $/+%]{1,43}$/.test(trimmed))
        throw reject('code39 takes 1-43 characters of 0-9, A-Z, space and - . $ / + %')
      return { type, bcid: 'code39', text: trimmed, layout: 'centred', human: trimmed, fileName: safeName(trimmed) }
    }
    case 'gs1_128': {
      const text = isAi ? trimmed : `(01)${gtinOf(trimmed, type).gtin14}`
      const parsed = parseAiString(text)
      if ('problem' in parsed) throw reject(`gs1_128: ${parsed.problem}`)
      const gtin = parsed.elements.find((e) => e.ai === '01')?.value
      return { type, bcid: 'gs1-128', text, layout: 'centred', human: text, fileName: gtin ?? safeName(text) }
    }
  }
  if (isAi) throw reject(`${type} takes a GTIN, not an AI-bracketed string; use gs1_128`)
  const { gtin14, digits } = gtinOf(trimmed, type)
  switch (type) {
    case 'ean13':
    case 'jan': {
      if (digits.length === 8) throw reject(`${type} takes a GTIN-13 or GTIN-12; got a GTIN-8 (use ean8)`)
      if (gtin14[0] !== '0')
        throw reject(`${type} cannot carry a GTIN-14 with indicator digit ${gtin14[0]} (use itf14 or ean14)`)
      const ean = gtin14.slice(1)
      if (type === 'jan' && !/^4[59]/.test(ean))
        throw reject(`jan takes a GTIN-13 with a Japanese GS1 prefix (45 or 49); got ${ean.slice(0, 3)}`)
      return { type, bcid: 'ean13', text: ean, layout: 'ean13', human: ean, fileName: gtin14 }
    }
    case 'ean8':
      if (digits.length !== 8) throw reject(`ean8 takes a GTIN-8 (8 digits); got ${digits.length} digits`)
      return { type, bcid: 'ean8', text: digits, layout: 'ean8', human: digits, fileName: gtin14 }
    case 'upca':
      if (!gtin14.startsWith('00') || digits.length === 8)
        throw reject(`upca takes a GTIN-12 (a GTIN-13 or GTIN-14 starting with 0 or 00); got ${digits}`)
      return { type, bcid: 'upca', text: gtin14.slice(2), layout: 'upca', human: gtin14.slice(2), fileName: gtin14 }
    case 'upce': {
      const upca = digits.length === 8 ? expandUpcE(digits) : gtin14.startsWith('00') ? gtin14.slice(2) : null
      if (!upca) throw reject(`upce takes a UPC-E or a zero-suppressible UPC-A; got ${digits}`)
      const upce = digits.length === 8 ? digits : compressUpcA(upca)
      if (typeof upce !== 'string') throw reject(`upce: ${upce.problem}`)
      return { type, bcid: 'upce', text: upce, layout: 'upce', human: upce, fileName: gtin14 }
    }
    case 'itf14':
      return { type, bcid: 'itf14', text: gtin14, layout: 'centred', human: gtin14, fileName: gtin14 }
    case 'ean14':
      return { type, bcid: 'ean14', text: `(01)${gtin14}`, layout: 'centred', human: `(01)${gtin14}`, fileName: gtin14 }
  }
  throw reject(`unknown barcode_type ${type}`)
}

function gtinOf(input: string, type: BarcodeType) {
  const digits = digitsOf(input)
  // For an explicit upce an 8-digit input is a UPC-E; for every other type it is a GTIN-8.
  const { gtin14 } = parseGtin(input, { allowUpcE: type === 'upce' })
  if (type === 'upce' && digits.length === 8 && !expandUpcE(digits))
    throw reject('upce: an 8-digit UPC-E starts with number system 0 or 1')
  return { gtin14, digits }
}

const safeName = (text: string) => text.replace(/[^A-Za-z0-9]+/g, '_').slice(0, 60) || 'barcode'
