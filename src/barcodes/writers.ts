import { Resvg } from '@resvg/resvg-js'
import { PDFDocument, rgb } from 'pdf-lib'
import { type Drawing, FONT_UNITS, outlineOf } from './layout'

const MM_TO_PT = 72 / 25.4
/** Millimetres (or points) with at most 4 decimals, no trailing zeros. */
export const num = (n: number) => String(Math.round(n * 10_000) / 10_000)

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

/** PNG at `dpi` with an opaque white background (text as outlines). */
export function toPng(d: Drawing, dpi: number): Uint8Array {
  const px = Math.max(1, Math.round((d.width / 25.4) * dpi))
  const rendered = new Resvg(toSvg(d, true), {
    fitTo: { mode: 'width', value: px },
    background: '#ffffff',
    font: { loadSystemFonts: false },
  }).render()
  return rendered.asPng()
}

/** The SVG path data (y down, font units) as PostScript path operators, placed and scaled. */
function pathToPostScript(path: string, x: number, baseline: number, scale: number, height: number): string {
  const out: string[] = []
  const tokens = path.match(/[MLCQZ]|-?[\d.]+(?:e-?\d+)?/gi) ?? []
  const px = (v: number) => num((x + v * scale) * MM_TO_PT)
  const py = (v: number) => num((height - (baseline + v * scale)) * MM_TO_PT)
  let i = 0
  let cx = 0
  let cy = 0
  const next = () => Number(tokens[i++])
  while (i < tokens.length) {
    const op = tokens[i++]
    if (op === 'M' || op === 'L') {
      cx = next()
      cy = next()
      out.push(`${px(cx)} ${py(cy)} ${op === 'M' ? 'moveto' : 'lineto'}`)
    } else if (op === 'C') {
      const [a, b, c, e, f, g] = [next(), next(), next(), next(), next(), next()]
      out.push(`${px(a)} ${py(b)} ${px(c)} ${py(e)} ${px(f)} ${py(g)} curveto`)
      cx = f
      cy = g
    } else if (op === 'Q') {
      const [qx, qy, ex, ey] = [next(), next(), next(), next()]
      const c1x = cx + (2 / 3) * (qx - cx)
      const c1y = cy + (2 / 3) * (qy - cy)
      const c2x = ex + (2 / 3) * (qx - ex)
      const c2y = ey + (2 / 3) * (qy - ey)
      out.push(`${px(c1x)} ${py(c1y)} ${px(c2x)} ${py(c2y)} ${px(ex)} ${py(ey)} curveto`)
      cx = ex
      cy = ey
    } else if (op === 'Z' || op === 'z') out.push('closepath')
  }
  return out.join('\n')
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
    if (path) lines.push('newpath', pathToPostScript(path, g.x, g.baseline, g.size / FONT_UNITS, d.height), 'fill')
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
