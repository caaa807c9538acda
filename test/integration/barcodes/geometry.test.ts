import { describe, expect, test } from 'bun:test'
import { inflateSync } from 'node:zlib'
import { createOrganization } from '../../support/fixtures'
import { baseUrl } from '../../support/server'

const MM = 72 / 25.4
type Rect = { x: number; y: number; w: number; h: number }

let key = ''
async function barcode(body: Record<string, unknown>) {
  key ||= (await createOrganization()).key
  const res = await fetch(`${baseUrl}/products/api/v1/barcode/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  return new Uint8Array(await res.arrayBuffer())
}

function svgGeometry(svg: string) {
  const width = Number(svg.match(/<svg[^>]* width="([\d.]+)mm"/)![1])
  const height = Number(svg.match(/<svg[^>]* height="([\d.]+)mm"/)![1])
  const bars = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"\/>/g)]
    .map((m) => ({ x: Number(m[1]), y: Number(m[2]), w: Number(m[3]), h: Number(m[4]) }))
    .filter((r) => !(r.x === 0 && r.y === 0 && r.w === width)) // the white background
  return { width, height, bars }
}

function epsGeometry(eps: string) {
  const hires = eps.match(/%%HiResBoundingBox: 0 0 ([\d.]+) ([\d.]+)/)!
  const box = eps.match(/%%BoundingBox: 0 0 (\d+) (\d+)/)!
  const rects = [...eps.matchAll(/^([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+) rectfill$/gm)].map((m) => ({
    x: Number(m[1]) / MM,
    y: Number(m[2]) / MM,
    w: Number(m[3]) / MM,
    h: Number(m[4]) / MM,
  }))
  return {
    width: Number(hires[1]) / MM,
    height: Number(hires[2]) / MM,
    box: [Number(box[1]), Number(box[2])],
    bars: rects,
  }
}

function pdfGeometry(pdf: Uint8Array) {
  const text = Buffer.from(pdf).toString('latin1')
  const media = text.match(/\/MediaBox \[ 0 0 ([\d.]+) ([\d.]+) \]/)!
  let content = ''
  for (const m of text.matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)) {
    const raw = Buffer.from(m[1]!, 'latin1')
    try {
      content += inflateSync(raw).toString('latin1')
    } catch {
      content += raw.toString('latin1')
    }
  }
  const bars = [
    ...content.matchAll(
      /1 0 0 1 ([\d.]+) ([\d.]+) cm\n(?:1 0 0 1 0 0 cm\n)*0 0 m\n0 ([\d.]+) l\n([\d.]+) [\d.]+ l\n[\d.]+ 0 l\nh\nf/g,
    ),
  ].map((m) => ({
    x: Number(m[1]) / MM,
    y: Number(m[2]) / MM,
    w: Number(m[4]) / MM,
    h: Number(m[3]) / MM,
  }))
  return {
    width: Number(media[1]) / MM,
    height: Number(media[2]) / MM,
    bars,
    hasImage: /\/Subtype\s*\/Image/.test(text),
    content,
  }
}

function expectExactBars(
  bars: Rect[],
  o: { modules: number; mw: number; qz: number; width: number; barHeight: number },
) {
  expect(o.width).toBeCloseTo(o.modules * o.mw + 2 * o.qz, 2)
  const sorted = [...bars].sort((a, b) => a.x - b.x)
  expect(sorted[0]!.x).toBeCloseTo(o.qz, 2) // quiet zone
  const last = sorted.at(-1)!
  expect(o.width - (last.x + last.w)).toBeCloseTo(o.qz, 2)
  for (const b of sorted) {
    const modules = b.w / o.mw
    expect(Math.abs(modules - Math.round(modules)) * o.mw).toBeLessThan(0.01) // whole modules
    expect(b.h).toBeGreaterThanOrEqual(o.barHeight - 0.01)
  }
  expect(Math.min(...sorted.map((b) => b.w))).toBeCloseTo(o.mw, 2) // narrowest bar
  expect(sorted.filter((b) => Math.abs(b.h - o.barHeight) < 0.01).length).toBeGreaterThan(sorted.length / 2) // bar height
}

describe('exact geometry', () => {
  const o = { modules: 95, mw: 0.33, qz: 6.5, barHeight: 25 }

  test('SVG in millimetres: width, quiet zone, whole-module bars, bar height, narrowest bar', async () => {
    const svg = Buffer.from(await barcode({ gtin: '4006381333931', format: 'svg' })).toString()
    const g = svgGeometry(svg)
    expect(svg).toContain(`viewBox="0 0 ${g.width} ${g.height}"`)
    expectExactBars(g.bars, { ...o, width: g.width })
  })

  test.each([
    [0.1, 1, 0],
    [0.5, 40.5, 12],
    [2, 100, 20],
  ])('SVG with module_width %p, module_height %p, quiet_zone %p', async (mw, h, qz) => {
    const g = svgGeometry(
      Buffer.from(
        await barcode({
          gtin: '96385074',
          format: 'svg',
          module_width: mw,
          module_height: h,
          quiet_zone: qz,
          write_text: false,
        }),
      ).toString(),
    )
    expectExactBars(g.bars, { modules: 67, mw, qz, width: g.width, barHeight: h })
    expect(g.height).toBeCloseTo(h, 2) // no text: the image is exactly the bars
    for (const b of g.bars) expect(b.h).toBeCloseTo(h, 2)
  })

  test('EPS: EPS 3.0 header, bounding box in points, vector rectangles with exact geometry', async () => {
    const eps = Buffer.from(await barcode({ gtin: '4006381333931', format: 'eps' })).toString()
    expect(eps).toStartWith('%!PS-Adobe-3.0 EPSF-3.0\n')
    const g = epsGeometry(eps)
    expect(g.box).toEqual([Math.ceil(g.width * MM), Math.ceil(g.height * MM)])
    expectExactBars(g.bars, { ...o, width: g.width })
    expect(eps).toContain('curveto') // text as outlines
  })

  test('PDF: page sized to symbol and quiet zones, bars as path operators, no raster image', async () => {
    const g = pdfGeometry(await barcode({ gtin: '4006381333931', format: 'pdf' }))
    expect(g.hasImage).toBe(false)
    expectExactBars(g.bars, { ...o, width: g.width })
    expect(g.content).toMatch(/\bc\n/) // glyph curves
  })

  test('PNG: pixel width equals the physical width at the requested dpi (±1 px), opaque white', async () => {
    for (const dpi of [72, 300, 600, 1200]) {
      const png = await barcode({ gtin: '4006381333931', format: 'png', dpi })
      const view = new DataView(png.buffer)
      const width = view.getUint32(16)
      expect(Math.abs(width - ((95 * 0.33 + 13) / 25.4) * dpi)).toBeLessThanOrEqual(1)
      // first pixel of the first row: white and opaque (true for every PNG filter type on row 0)
      const chunks: Uint8Array[] = []
      for (let at = 8; at < png.length; ) {
        const len = view.getUint32(at)
        const type = Buffer.from(png.subarray(at + 4, at + 8)).toString()
        if (type === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + len))
        if (type === 'pHYs') expect(view.getUint32(at + 8)).toBe(Math.round(dpi / 0.0254)) // resolution recorded
        at += 12 + len
      }
      const raw = inflateSync(Buffer.concat(chunks))
      const colorType = png[25]
      const channels = { 0: 1, 2: 3, 6: 4 }[colorType as 0 | 2 | 6] // gray, RGB or RGBA
      expect(channels).toBeDefined()
      expect([...raw.subarray(1, 1 + channels!)]).toEqual(Array(channels).fill(255))
    }
  })

  test('text: standard size extends EAN guard bars; compact (font_size < 8) does not; write_text false omits text', async () => {
    const standard = svgGeometry(
      Buffer.from(await barcode({ gtin: '4006381333931', format: 'svg', font_size: 8 })).toString(),
    )
    expect(new Set(standard.bars.map((b) => b.h)).size).toBe(2) // guard bars longer
    const compact = svgGeometry(
      Buffer.from(await barcode({ gtin: '4006381333931', format: 'svg', font_size: 7.9 })).toString(),
    )
    expect(new Set(compact.bars.map((b) => b.h))).toEqual(new Set([25]))
    expect(compact.height).toBeLessThan(standard.height)
    const none = Buffer.from(await barcode({ gtin: '4006381333931', format: 'svg', write_text: false })).toString()
    expect(none).not.toContain('<path')
    expect(none).not.toContain('<text')
  })

  test('embed_font: OCR-B outlines, or a font-family reference; quiet_zone 0 drops the > marker', async () => {
    const embedded = Buffer.from(await barcode({ gtin: '4006381333931', format: 'svg' })).toString()
    expect(embedded).toContain('<path')
    expect(embedded).not.toContain('<text')
    const referenced = Buffer.from(
      await barcode({ gtin: '4006381333931', format: 'svg', embed_font: false }),
    ).toString()
    expect(referenced).toContain('font-family="OCR-B')
    expect(referenced).toContain('>&gt;</text>')
    const noMargin = Buffer.from(
      await barcode({ gtin: '4006381333931', format: 'svg', embed_font: false, quiet_zone: 0 }),
    ).toString()
    expect(noMargin).not.toContain('&gt;</text>')
    expect(svgGeometry(noMargin).width).toBeCloseTo(95 * 0.33, 2)
    const ean8 = Buffer.from(await barcode({ gtin: '96385074', format: 'svg', embed_font: false })).toString()
    expect(ean8).toContain('>&lt;</text>')
  })
})
