import { deflateSync } from 'node:zlib'
import { Resvg } from '@resvg/resvg-js'
import { AppError } from '../shared/errors'
import { advanceOf, type Drawing, FONT_UNITS, outlineOf } from './layout'

type Mask = { width: number; height: number; baseline: number; alpha: Uint8Array }
const masks = new Map<string, Mask>()

/** A glyph's coverage mask at a pixel size, rendered once by resvg and kept (like any glyph cache). */
function glyphMask(char: string, sizePx: number): Mask {
  const key = `${char}:${sizePx.toFixed(2)}`
  const cached = masks.get(key)
  if (cached) return cached
  const pad = 2
  const width = Math.ceil(advanceOf(char) * sizePx) + 2 * pad
  const baseline = Math.ceil(sizePx) + pad
  const height = baseline + Math.ceil(sizePx * 0.35) + pad
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><path transform="translate(${pad} ${baseline}) scale(${sizePx / FONT_UNITS})" d="${outlineOf(char)}"/></svg>`
  const rgba = new Resvg(svg, { font: { loadSystemFonts: false } }).render().pixels
  const alpha = new Uint8Array(width * height)
  for (let i = 0; i < alpha.length; i++) alpha[i] = rgba[i * 4 + 3]!
  const mask = { width, height, baseline, alpha }
  if (masks.size > 2000) masks.clear()
  masks.set(key, mask)
  return mask
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(Buffer.from(type, 'latin1'), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

/** Whether two rows of the image are equal (most rows of a barcode are). */
function sameRow(pixels: Uint8Array, a: number, b: number, width: number): boolean {
  for (let x = 0; x < width; x++) if (pixels[a + x] !== pixels[b + x]) return false
  return true
}

/** 8-bit grayscale PNG (opaque by construction), rows filtered with Up, with pHYs for the dpi. */
function encodeGray(pixels: Uint8Array, width: number, height: number, dpi: number): Uint8Array {
  const raw = new Uint8Array((width + 1) * height) // zero-filled: an unchanged row filters to zeros
  raw.set(pixels.subarray(0, width), 1)
  for (let y = 1; y < height; y++) {
    const row = y * (width + 1)
    raw[row] = 2 // Up
    const at = y * width
    if (sameRow(pixels, at - width, at, width)) continue
    for (let x = 0; x < width; x++) raw[row + 1 + x] = (pixels[at + x]! - pixels[at - width + x]!) & 0xff
  }
  const ihdr = new Uint8Array(13)
  const h = new DataView(ihdr.buffer)
  h.setUint32(0, width)
  h.setUint32(4, height)
  ihdr.set([8, 0, 0, 0, 0], 8) // bit depth 8, grayscale, deflate, no filter method, no interlace
  const phys = new Uint8Array(9)
  const ppm = Math.round(dpi / 0.0254)
  new DataView(phys.buffer).setUint32(0, ppm)
  new DataView(phys.buffer).setUint32(4, ppm)
  phys[8] = 1 // metre
  const parts = [
    Uint8Array.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('pHYs', phys),
    chunk('IDAT', deflateSync(raw, { level: 6 })),
    chunk('IEND', new Uint8Array()),
  ]
  return Buffer.concat(parts)
}

/**
 * PNG at `dpi`: the pixel width is the physical width at that resolution. Bars are drawn with exact
 * coverage (a bar edge inside a pixel gives a grey pixel), glyphs from cached OCR-B masks.
 */
/** Most pixels a raster may have (about 24 MB of grayscale while it is built). */
export const MAX_PIXELS = 24_000_000

/** The raster's size in pixels at `dpi`. */
export function pngSize(d: Drawing, dpi: number) {
  const width = Math.max(1, Math.round((d.width / 25.4) * dpi))
  return { width, height: Math.max(1, Math.round(d.height * (width / d.width))) }
}

export function toPng(d: Drawing, dpi: number): Uint8Array {
  const { width, height } = pngSize(d, dpi)
  if (width * height > MAX_PIXELS)
    throw new AppError(
      'validation_error',
      `the PNG would be ${width} × ${height} px (${Math.round((width * height) / 1e6)} million pixels); the limit is ${MAX_PIXELS / 1e6} million: lower dpi, module_width, module_height or quiet_zone`,
      [{ field: 'dpi', message: `the image would exceed ${MAX_PIXELS / 1e6} million pixels` }],
    )
  const scale = width / d.width // px per mm
  const img = new Uint8Array(width * height).fill(255)
  // Bars start at the top; rows between two bar bottoms are identical: one template row a band.
  const bottoms = [...new Set(d.bars.map((b) => Math.min(height, Math.round((b.y + b.h) * scale))))].sort(
    (a, b) => a - b,
  )
  let top = 0
  for (const bottom of bottoms) {
    if (bottom <= top) continue
    const template = new Uint8Array(width).fill(255)
    for (const b of d.bars) {
      if (Math.round((b.y + b.h) * scale) < bottom) continue
      const x0 = b.x * scale
      const x1 = (b.x + b.w) * scale
      for (let px = Math.floor(x0); px < Math.min(width, Math.ceil(x1)); px++) {
        const cover = Math.min(x1, px + 1) - Math.max(x0, px)
        template[px] = Math.min(template[px]!, Math.round(255 * (1 - cover)))
      }
    }
    for (let y = top; y < bottom; y++) img.set(template, y * width)
    top = bottom
  }
  for (const g of d.glyphs) {
    if (!outlineOf(g.char)) continue
    const m = glyphMask(g.char, g.size * scale)
    const left = Math.round(g.x * scale) - 2
    const top = Math.round(g.baseline * scale) - m.baseline
    for (let y = 0; y < m.height; y++) {
      const py = top + y
      if (py < 0 || py >= height) continue
      for (let x = 0; x < m.width; x++) {
        const px = left + x
        const a = m.alpha[y * m.width + x]!
        if (a === 0 || px < 0 || px >= width) continue
        const i = py * width + px
        img[i] = Math.min(img[i]!, 255 - a)
      }
    }
  }
  return encodeGray(img, width, height, dpi)
}
