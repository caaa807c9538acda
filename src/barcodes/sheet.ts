import { closeSync, openSync, writeSync } from 'node:fs'
import { deflateSync } from 'node:zlib'
import { cidHex, LABEL_FONT_OBJECTS, LabelFont } from './label-font'
import { type Drawing, FONT_UNITS, outlineOf } from './layout'
import { MM_TO_PT, num } from './numbers'
import { convertPath, PDF } from './paths'

/** Label sheet templates (millimetres): page, grid, label size, first label's corner, pitch. */
export const TEMPLATES = {
  'a4-3x8': { page: [210, 297], cols: 3, rows: 8, label: [70, 37], origin: [0, 0.5], pitch: [70, 37] },
  // Avery 5160 / US Letter 30 per sheet: 2 5/8 × 1 in labels, 3/16 in side and 1/2 in top margins
  'letter-3x10': {
    page: [215.9, 279.4],
    cols: 3,
    rows: 10,
    label: [66.675, 25.4],
    origin: [4.7625, 12.7],
    pitch: [69.85, 25.4],
  },
} as const
export type TemplateName = keyof typeof TEMPLATES

const PADDING = 2 // mm inside each label
const LABEL_TEXT = 2.2 // mm: the label line's font size (em)
const LABEL_TEXT_MIN = 1.5 // mm: a long label line shrinks to this before it is cut short with "…"

/**
 * A PDF of label sheets written straight to disk, page by page: memory stays flat whatever the
 * number of labels. (pdf-lib builds whole documents in memory, so sheets use this small writer;
 * single symbols use pdf-lib.) Each OCR-B glyph of the digits under the bars is one Form XObject,
 * drawn wherever it is needed; the label line above the symbol is text in an embedded subset of
 * DejaVu Sans (see label-font.ts), so it can be searched and copied in any language.
 */
export class SheetWriter {
  #fd: number
  #offset = 0
  #offsets: number[] = [] // by object number - 1
  #pages: number[] = []
  #cell = 0
  #content: string[] = []
  #glyphIds = new Map<string, number>()
  #font = new LabelFont()
  readonly template: (typeof TEMPLATES)[TemplateName]

  constructor(path: string, template: TemplateName) {
    this.template = TEMPLATES[template]
    this.#fd = openSync(path, 'w')
    this.#write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n')
    this.#reserve() // 1: catalog, written last
    this.#reserve() // 2: page tree, written last
    this.#reserve() // 3: resources shared by every page (the glyphs), written last
  }

  #write(s: string | Uint8Array) {
    const bytes = typeof s === 'string' ? Buffer.from(s, 'latin1') : s
    writeSync(this.#fd, bytes)
    this.#offset += bytes.length
  }

  #reserve(): number {
    this.#offsets.push(-1)
    return this.#offsets.length
  }

  #object(id: number, body: string | Uint8Array, dict?: string) {
    this.#offsets[id - 1] = this.#offset
    if (dict === undefined) this.#write(`${id} 0 obj\n${body}\nendobj\n`)
    else {
      this.#write(`${id} 0 obj\n${dict}\nstream\n`)
      this.#write(body)
      this.#write('\nendstream\nendobj\n')
    }
  }

  #glyph(char: string): string | null {
    const path = outlineOf(char)
    if (!path) return null
    let id = this.#glyphIds.get(char)
    if (id === undefined) {
      id = this.#reserve()
      this.#glyphIds.set(char, id)
      const content = `${convertPath(path, (x, y) => [x, -y], PDF)}\nf`
      this.#object(
        id,
        content,
        `<< /Type /XObject /Subtype /Form /BBox [-200 -400 1200 1200] /Length ${content.length} >>`,
      )
    }
    return `G${id}`
  }

  /** Draws one symbol, centred and scaled into the next label (and the label text above it). */
  add(d: Drawing, label?: string) {
    const t = this.template
    const col = this.#cell % t.cols
    const row = Math.floor(this.#cell / t.cols)
    const left = t.origin[0] + col * t.pitch[0] + PADDING
    const top = t.origin[1] + row * t.pitch[1] + PADDING
    const width = t.label[0] - 2 * PADDING
    let height = t.label[1] - 2 * PADDING
    const out = this.#content
    if (label) {
      this.#labelLine(label, left, width, top + LABEL_TEXT * 0.75)
      height -= LABEL_TEXT + 0.5
    }
    const scale = Math.min(width / d.width, height / d.height)
    const x0 = left + (width - d.width * scale) / 2
    const y0 = top + (label ? LABEL_TEXT + 0.5 : 0) + (height - d.height * scale) / 2
    const pageH = t.page[1]
    // symbol space (mm, y down) -> page space (points, y up)
    out.push(
      `q ${num(scale * MM_TO_PT)} 0 0 ${num(-scale * MM_TO_PT)} ${num(x0 * MM_TO_PT)} ${num((pageH - y0) * MM_TO_PT)} cm`,
    )
    out.push(...d.bars.map((b) => `${num(b.x)} ${num(b.y)} ${num(b.w)} ${num(b.h)} re`), 'f')
    for (const g of d.glyphs) {
      const name = this.#glyph(g.char)
      if (name)
        out.push(
          `q ${num(g.size / FONT_UNITS)} 0 0 ${num(-g.size / FONT_UNITS)} ${num(g.x)} ${num(g.baseline)} cm /${name} Do Q`,
        )
    }
    out.push('Q')
    if (++this.#cell === t.cols * t.rows) this.#flushPage()
  }

  /** The label line, centred; shrunk to fit, then cut short with "…" if it still does not. */
  #labelLine(value: string, left: number, width: number, baseline: number) {
    let { cids, advances } = this.#font.set(value)
    let total = advances.reduce((a, b) => a + b, 0)
    const size = total * LABEL_TEXT <= width ? LABEL_TEXT : Math.max(LABEL_TEXT_MIN, width / total)
    if (total * size > width) {
      const ellipsis = this.#font.set('…')
      let kept = 0
      let used = ellipsis.advances[0]!
      while (kept < cids.length && (used + advances[kept]!) * size <= width) used += advances[kept++]!
      cids = [...cids.slice(0, kept), ...ellipsis.cids]
      total = used
    }
    const x = left + (width - total * size) / 2
    const y = this.template.page[1] - baseline
    this.#content.push(
      `BT /L ${num(size * MM_TO_PT)} Tf ${num(x * MM_TO_PT)} ${num(y * MM_TO_PT)} Td <${cidHex(cids)}> Tj ET`,
    )
  }

  #flushPage() {
    if (this.#cell === 0) return
    const content = deflateSync(Buffer.from(this.#content.join('\n'), 'latin1'), { level: 1 })
    const contentId = this.#reserve()
    this.#object(contentId, content, `<< /Length ${content.length} /Filter /FlateDecode >>`)
    const pageId = this.#reserve()
    const [w, h] = this.template.page
    this.#object(
      pageId,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${num(w * MM_TO_PT)} ${num(h * MM_TO_PT)}] /Contents ${contentId} 0 R /Resources 3 0 R >>`,
    )
    this.#pages.push(pageId)
    this.#content = []
    this.#cell = 0
  }

  get pageCount() {
    return this.#pages.length + (this.#cell > 0 ? 1 : 0)
  }

  /** Writes the last page, the shared resources, page tree, catalog and cross-reference table. */
  close() {
    this.#flushPage()
    const glyphs = [...this.#glyphIds.values()].map((id) => `/G${id} ${id} 0 R`).join(' ')
    let fonts = ''
    if (this.#font.used) {
      const first = this.#reserve()
      for (let k = 1; k < LABEL_FONT_OBJECTS; k++) this.#reserve()
      this.#font.write(first, (id, body, dict) => this.#object(id, body, dict))
      fonts = ` /Font << /L ${first} 0 R >>`
    }
    this.#object(3, `<< /XObject << ${glyphs} >>${fonts} >>`)
    this.#object(
      2,
      `<< /Type /Pages /Kids [${this.#pages.map((p) => `${p} 0 R`).join(' ')}] /Count ${this.#pages.length} >>`,
    )
    this.#object(1, '<< /Type /Catalog /Pages 2 0 R >>')
    const xref = this.#offset
    const entries = this.#offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')
    this.#write(`xref\n0 ${this.#offsets.length + 1}\n0000000000 65535 f \n${entries}`)
    this.#write(`trailer\n<< /Size ${this.#offsets.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`)
    closeSync(this.#fd)
  }
}
