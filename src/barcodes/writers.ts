import { PDFDocument, rgb } from 'pdf-lib'
import { type Drawing, FONT_UNITS, outlineOf } from './layout'

import { MM_TO_PT, num } from './numbers'
import { convertPath, POSTSCRIPT } from './paths'

const escapeXml = (s: string) =>
  s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!)

/** SVG in millimetre units. With embed_font, text is OCR-B outlines; without, it names the OCR-B family. */
export function toSvg(d: Drawing, embedFont: boolean): string {
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(d.width)}mm" height="${num(d.height)}mm" viewBox="0 0 ${num(d.width)} ${num(d.height)}" shape-rendering="crispEdges">`,
    `<rect x="0" y="0" width="${num(d.width)}" height="${num(d.height)}" fill="#ffffff"/>`,
    '<g fill="#000000">',
    ...d.bars.map((b) => `<rect x="${num(b.x)}" y="${num(b.y)}" width="${num(b.w)}" height="${num(b.h)}"/>`),
    '</g>',
  ]
  if (embedFont) {
    parts.push('<g fill="#000000" shape-rendering="geometricPrecision">')
    for (const g of d.glyphs) {
      const path = outlineOf(g.char)
      if (path)
        parts.push(
          `<path transform="translate(${num(g.x)} ${num(g.baseline)}) scale(${num(g.size / FONT_UNITS)})" d="${path}"/>`,
        )
    }
    parts.push('</g>')
  } else {
    for (const t of d.text)
      parts.push(
        `<text x="${num(t.x)}" y="${num(t.baseline)}" font-family="OCR-B, 'OCR B', monospace" font-size="${num(t.size)}" text-anchor="middle" fill="#000000">${escapeXml(t.value)}</text>`,
      )
  }
  parts.push('</svg>')
  return parts.join('')
}

/** EPS 3.0: vector rectangles and glyph outlines, bounding box in points. */
export function toEps(d: Drawing, title: string): string {
  const w = d.width * MM_TO_PT
  const h = d.height * MM_TO_PT
  const lines = [
    '%!PS-Adobe-3.0 EPSF-3.0',
    `%%BoundingBox: 0 0 ${Math.ceil(w)} ${Math.ceil(h)}`,
    `%%HiResBoundingBox: 0 0 ${num(w)} ${num(h)}`,
    `%%Title: ${title.replace(/[\r\n]/g, ' ')}`,
    '%%Creator: gtin-catalog',
    '%%Pages: 0',
    '%%EndComments',
    'gsave',
    `1 1 1 setrgbcolor 0 0 ${num(w)} ${num(h)} rectfill`,
    '0 0 0 setrgbcolor',
    ...d.bars.map(
      (b) =>
        `${num(b.x * MM_TO_PT)} ${num((d.height - b.y - b.h) * MM_TO_PT)} ${num(b.w * MM_TO_PT)} ${num(b.h * MM_TO_PT)} rectfill`,
    ),
  ]
  for (const g of d.glyphs) {
    const path = outlineOf(g.char)
    const scale = g.size / FONT_UNITS
    const at = (x: number, y: number): [number, number] => [
      (g.x + x * scale) * MM_TO_PT,
      (d.height - (g.baseline + y * scale)) * MM_TO_PT,
    ]
    if (path) lines.push('newpath', convertPath(path, at, POSTSCRIPT), 'fill')
  }
  lines.push('grestore', 'showpage', '%%EOF', '')
  return lines.join('\n')
}

/** PDF (pdf-lib): one page the size of the symbol; bars and glyphs drawn with path operators. */
export async function toPdf(d: Drawing, title: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  doc.setTitle(title)
  doc.setCreator('gtin-catalog')
  const page = doc.addPage([d.width * MM_TO_PT, d.height * MM_TO_PT])
  const black = rgb(0, 0, 0)
  for (const b of d.bars)
    page.drawRectangle({
      x: b.x * MM_TO_PT,
      y: (d.height - b.y - b.h) * MM_TO_PT,
      width: b.w * MM_TO_PT,
      height: b.h * MM_TO_PT,
      color: black,
    })
  for (const g of d.glyphs) {
    const path = outlineOf(g.char)
    if (path)
      page.drawSvgPath(path, {
        x: g.x * MM_TO_PT,
        y: (d.height - g.baseline) * MM_TO_PT,
        scale: (g.size / FONT_UNITS) * MM_TO_PT,
        color: black,
      })
  }
  return doc.save({ useObjectStreams: false })
}
