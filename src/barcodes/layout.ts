import bwipjs from 'bwip-js/node'
import font from './ocrb-glyphs.json'
import type { BarcodeSymbol } from './symbology'

export type BarcodeOptions = {
  module_width: number
  module_height: number
  font_size: number
  quiet_zone: number
  write_text: boolean
}

export type Bar = { x: number; y: number; w: number; h: number }
export type Glyph = { char: string; x: number; baseline: number; size: number }
/** A symbol laid out in millimetres, y down, origin at the top left of the image. */
export type Drawing = {
  width: number
  height: number
  bars: Bar[]
  glyphs: Glyph[]
  text: { value: string; x: number; baseline: number; size: number }[]
}

const PT = 25.4 / 72 // millimetres per point
const EM = font.unitsPerEm
const CAP = font.capHeight / EM
export const advanceOf = (char: string) => (font.glyphs[char as keyof typeof font.glyphs]?.advance ?? 600) / EM

/**
 * Digit centres, in modules from the first bar, of the EAN/UPC human-readable interpretation
 * (GS1 General Specifications §5.2.5): outer digits and light-margin indicators sit in the quiet zones.
 */
function digitCentres(
  layout: BarcodeSymbol['layout'],
  human: string,
  modules: number,
): { char: string; at: number; small: boolean }[] {
  const slot = (start: number, k: number) => start + 7 * k + 3.5
  const d = [...human]
  switch (layout) {
    case 'ean13':
      return [
        { char: d[0]!, at: -4, small: false },
        ...d.slice(1, 7).map((c, k) => ({ char: c, at: slot(3, k), small: false })),
        ...d.slice(7).map((c, k) => ({ char: c, at: slot(50, k), small: false })),
      ]
    case 'ean8':
      return [
        ...d.slice(0, 4).map((c, k) => ({ char: c, at: slot(3, k), small: false })),
        ...d.slice(4).map((c, k) => ({ char: c, at: slot(36, k), small: false })),
      ]
    case 'upca':
      return [
        { char: d[0]!, at: -4, small: true },
        ...d.slice(1, 6).map((c, k) => ({ char: c, at: slot(3, k + 1), small: false })),
        ...d.slice(6, 11).map((c, k) => ({ char: c, at: slot(50, k), small: false })),
        { char: d[11]!, at: modules + 4, small: true },
      ]
    case 'upce':
      return [
        { char: d[0]!, at: -4, small: true },
        ...d.slice(1, 7).map((c, k) => ({ char: c, at: slot(3, k), small: false })),
        { char: d[7]!, at: modules + 4, small: true },
      ]
    default:
      return []
  }
}

/**
 * Exact geometry: every bar is a whole number of modules wide; total width = modules × module_width
 * + 2 × quiet_zone; bars are module_height tall. With text in standard size (font_size ≥ 8), EAN/UPC
 * guard bars extend 5 modules into the text band; compact text (font_size < 8) keeps every bar the
 * same height and sits closer. quiet_zone 0 drops the margins and the < > light-margin indicators.
 */
export function layoutSymbol(symbol: BarcodeSymbol, o: BarcodeOptions): Drawing {
  const [raw] = (bwipjs as unknown as { raw: (opts: object) => { sbs: number[]; bbs: number[] }[] }).raw({
    bcid: symbol.bcid,
    text: symbol.text,
    includetext: true,
  })
  const sbs = raw!.sbs
  const modules = sbs.reduce((a, b) => a + b, 0)
  const mw = o.module_width
  const compact = o.font_size < 8
  const eanFamily = symbol.layout !== 'centred'
  const textMm = o.font_size * PT
  const guardExtension = o.write_text && eanFamily && !compact ? 5 * mw : 0
  const width = modules * mw + 2 * o.quiet_zone
  const bars: Bar[] = []
  let x = o.quiet_zone
  let barIndex = 0
  for (let i = 0; i < sbs.length; i++) {
    const w = sbs[i]! * mw
    if (i % 2 === 0) {
      const guard = (raw!.bbs[barIndex] ?? 0) < 0
      bars.push({ x, y: 0, w, h: o.module_height + (guard ? guardExtension : 0) })
      barIndex++
    }
    x += w
  }
  const glyphs: Glyph[] = []
  const text: Drawing['text'] = []
  let height = o.module_height
  if (o.write_text) {
    const gap = compact ? 0.15 * textMm : 0.3 * textMm
    const baseline = o.module_height + gap + CAP * textMm
    height = baseline + (compact ? 0.1 : 0.25) * textMm
    if (eanFamily) {
      const centres = digitCentres(symbol.layout, symbol.human, modules)
      if (o.quiet_zone > 0 && symbol.layout === 'ean13') centres.push({ char: '>', at: modules + 4, small: false })
      if (o.quiet_zone > 0 && symbol.layout === 'ean8')
        centres.push({ char: '<', at: -4, small: false }, { char: '>', at: modules + 4, small: false })
      for (const c of centres) {
        const size = c.small ? textMm * 0.8 : textMm
        glyphs.push({ char: c.char, x: o.quiet_zone + c.at * mw - (advanceOf(c.char) * size) / 2, baseline, size })
      }
      text.push(
        ...glyphs.map((g) => ({
          value: g.char,
          x: g.x + (advanceOf(g.char) * g.size) / 2,
          baseline: g.baseline,
          size: g.size,
        })),
      )
    } else {
      const total = [...symbol.human].reduce((a, c) => a + advanceOf(c) * textMm, 0)
      let gx = width / 2 - total / 2
      for (const char of symbol.human) {
        glyphs.push({ char, x: gx, baseline, size: textMm })
        gx += advanceOf(char) * textMm
      }
      text.push({ value: symbol.human, x: width / 2, baseline, size: textMm })
    }
  }
  return { width, height, bars, glyphs, text }
}

/** A glyph's outline as SVG path data (y down), in font units with the baseline at 0. */
export const outlineOf = (char: string) => font.glyphs[char as keyof typeof font.glyphs]?.d ?? ''
export const FONT_UNITS = EM
