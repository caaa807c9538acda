import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { layoutSymbol } from '../../../src/barcodes/layout'
import { SheetWriter, TEMPLATES } from '../../../src/barcodes/sheet'
import { resolveSymbol } from '../../../src/barcodes/symbology'
import fixture from '../../fixtures/label-names.json'
import { BATCH, batchItems, waitForBatch } from '../../support/batches'
import { createOrganization } from '../../support/fixtures'
import { baseUrl, post } from '../../support/server'

// Label lines are text in an embedded DejaVu Sans subset: they print in any European script, and
// pdftotext gives them back exactly. Checked with poppler (pdftotext, pdffonts, pdftoppm).
const work = mkdtempSync(join(tmpdir(), 'gtin-label-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))
const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed: ${r.stderr.toString()}`)
  return r.stdout.toString()
}

const NAMES = [...fixture.off.map((o) => o.name), ...fixture.constructed.map((c) => c.name)]
const SETTINGS = { module_width: 0.33, module_height: 22.85, font_size: 10, quiet_zone: 3.63, write_text: true }

/** A sheet written in this process: one label per entry. */
function sheet(labels: string[], name: string): string {
  const path = join(work, `${name}.pdf`)
  const writer = new SheetWriter(path, 'a4-3x8')
  for (const label of labels) writer.add(layoutSymbol(resolveSymbol('4006381333931', 'auto'), SETTINGS), label)
  writer.close()
  return path
}

type Gray = { width: number; height: number; pixels: Uint8Array }

/** Page `page` rendered by poppler at 300 dpi in grey (PGM). */
function render(pdf: string, page: number): Gray {
  const out = join(work, `render-${page}-${Math.random().toString(36).slice(2)}`)
  run(['pdftoppm', '-r', '300', '-gray', '-f', String(page), '-l', String(page), '-singlefile', pdf, out])
  const bytes = readFileSync(`${out}.pgm`)
  const header = bytes.subarray(0, 20).toString('latin1').split(/\s+/)
  const [width, height] = [Number(header[1]), Number(header[2])]
  return { width, height, pixels: bytes.subarray(bytes.length - width * height) }
}

/** The ink of label `cell`'s text line: its extent, and its pixels relative to its top left corner. */
function labelInk(image: Gray, cell: number) {
  const t = TEMPLATES['a4-3x8']
  const px = (mm: number) => Math.round((mm / 25.4) * 300)
  const left = t.origin[0] + (cell % t.cols) * t.pitch[0] + 2
  const top = t.origin[1] + Math.floor(cell / t.cols) * t.pitch[1] + 2
  const dark: [number, number][] = []
  for (let y = px(top - 1.2); y < px(top + 2.5); y++)
    for (let x = px(left); x < px(left + t.label[0] - 4); x++)
      if (image.pixels[y * image.width + x]! < 128) dark.push([x, y])
  const ys = dark.map(([, y]) => y)
  const [x0, y0] = [Math.min(...dark.map(([x]) => x)), Math.min(...ys)]
  return {
    drawn: dark.length > 0,
    top: y0,
    bottom: Math.max(...ys),
    shape: new Set(dark.map(([x, y]) => `${x - x0},${y - y0}`)),
  }
}

/** How alike two shapes are (shared pixels over all pixels): 1 for the same glyph drawn twice. */
function likeness(a: Set<string>, b: Set<string>): number {
  let shared = 0
  for (const p of a) if (b.has(p)) shared++
  return shared / (a.size + b.size - shared)
}

describe('label sheets print names in any European script', () => {
  test('a batch sheet of French, German, Spanish, Polish, Greek and Russian names: pdftotext gives each exactly', async () => {
    const org = await createOrganization()
    const gtins = batchItems(NAMES.length + 1, 11).filter((_, i) => i !== 7) // row 8's check digit is wrong
    const items = NAMES.map((label, i) => ({ gtin: gtins[i]!.gtin, label }))
    const res = await post(BATCH, { items, output: 'sheet', template: 'a4-3x8' }, org.key)
    expect(res.status).toBe(202)
    const done = await waitForBatch(baseUrl, res.json.id, org.key)
    expect(done.status).toBe('succeeded')
    const file = await fetch(baseUrl + done.download_url, { headers: { 'x-api-key': org.key } })
    const pdf = join(work, 'batch.pdf')
    writeFileSync(pdf, new Uint8Array(await file.arrayBuffer()))

    // each label is a block of its own; the order of blocks is poppler's reading order
    const lines = run(['pdftotext', '-enc', 'UTF-8', pdf, '-'])
      .split(/[\n\f]/)
      .filter((l) => l.trim() !== '')
    expect(lines.sort()).toEqual([...NAMES].sort())
    // one font: embedded, subset, with a ToUnicode map
    const fonts = run(['pdffonts', pdf]).trim().split('\n').slice(2)
    expect(fonts).toHaveLength(1)
    expect(fonts[0]).toMatch(/^[A-Z]{6}\+DejaVuSans\s+CID TrueType\s+Identity-H\s+yes yes yes/)
  }, 60_000)

  test('the rendered page shows every accented letter: each differs from its bare letter and reaches past it', () => {
    const letters = [...new Set(NAMES.join('').normalize('NFC'))].filter(
      (c) => /\p{L}/u.test(c) && c.charCodeAt(0) > 127,
    )
    const accented = letters.filter((c) => c.normalize('NFD').length > 1)
    expect(accented.length).toBeGreaterThan(20)
    // pairs on one page each: the letter, then the letter without its marks
    const labels = accented.flatMap((c) => [c, c.normalize('NFD')[0]!])
    const pdf = sheet(labels, 'accents')
    const perPage = 24
    const pages: Gray[] = []
    for (let i = 0; i < labels.length; i += 2) {
      const page = Math.floor(i / perPage)
      pages[page] ??= render(pdf, page + 1)
      const image = pages[page]!
      const withMarks = labelInk(image, i % perPage)
      const bare = labelInk(image, (i % perPage) + 1)
      const letter = labels[i]!
      expect({ letter, drawn: withMarks.drawn, alike: likeness(withMarks.shape, bare.shape) < 0.8 }).toEqual({
        letter,
        drawn: true,
        alike: true,
      })
      // the mark is ink above the bare letter (acute, umlaut, ring…) or below it (cedilla, ogonek)
      const reaches = withMarks.top < bare.top || withMarks.bottom > bare.bottom
      expect({ letter, reaches }).toEqual({ letter, reaches: true })
    }
  }, 60_000)

  test('Greek and Cyrillic letters are drawn, none as the replacement mark; a script the font lacks shows the mark', () => {
    const letters = [...new Set(NAMES.join(''))].filter((c) => /[\p{Script=Greek}\p{Script=Cyrillic}]/u.test(c))
    expect(letters.length).toBeGreaterThan(20)
    const labels = ['\uFFFD', ...letters.slice(0, 22), '中']
    const image = render(sheet(labels, 'scripts'), 1)
    const mark = labelInk(image, 0)
    for (const [i, letter] of labels.entries()) {
      if (i === 0 || letter === '中') continue
      const ink = labelInk(image, i)
      expect({ letter, drawn: ink.drawn, mark: likeness(ink.shape, mark.shape) > 0.8 }).toEqual({
        letter,
        drawn: true,
        mark: false,
      })
    }
    // the visible fallback: the replacement mark's ink, and the name itself in the text layer
    expect(likeness(labelInk(image, labels.length - 1).shape, mark.shape)).toBeGreaterThan(0.8)
    const text = run(['pdftotext', '-raw', '-enc', 'UTF-8', join(work, 'scripts.pdf'), '-'])
    expect(text).toContain('中')
  }, 30_000)

  test('a long name shrinks to fit, then ends in an ellipsis; copying gives the part printed', () => {
    const long = `Trésor goût Chocolat Noisettes ${'et encore '.repeat(8)}fin`
    const pdf = sheet([long], 'long')
    const [line] = run(['pdftotext', '-raw', '-enc', 'UTF-8', pdf, '-']).split('\n')
    expect(line!.endsWith('…')).toBe(true)
    expect(long.startsWith(line!.slice(0, -1))).toBe(true)
    expect(line!.length).toBeGreaterThan(50)
  })
})
