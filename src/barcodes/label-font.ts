import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { deflateSync } from 'node:zlib'
import * as fontkit from 'fontkit'

/**
 * The font of the label line on label sheets: DejaVu Sans (Latin with its extensions, Greek,
 * Cyrillic, Armenian, Georgian and most symbols), embedded as a subset of the glyphs used, as real
 * text that PDF readers can search and copy.
 *
 * Every character cluster (a letter with its combining marks) gets its own character id, mapped to
 * a glyph and, through the ToUnicode map, back to the cluster exactly as given. A cluster the font
 * cannot draw on its own (a script it lacks, or one that needs shaping or right-to-left ordering,
 * such as Arabic, Hebrew or the Indic scripts) is drawn as a visible replacement mark, U+FFFD, and
 * still maps back to the text as given: the page shows that something is missing, and copying
 * the label gives the whole name.
 */

const FILE = createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')
// Scripts drawn glyph by glyph, left to right, without shaping.
const DRAWABLE =
  /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Armenian}\p{Script=Georgian}\p{Script=Common}\p{Script=Inherited}]$/u
const REPLACEMENT = 0xfffd
// Two-byte character codes; past the last, further new clusters are drawn as the mark, without text.
const MAX_CID = 0xffff

let loaded: fontkit.Font | null = null
function font(): fontkit.Font {
  loaded ??= fontkit.openSync(FILE) as fontkit.Font
  return loaded
}

const segmenter = new Intl.Segmenter('und', { granularity: 'grapheme' })

const known = new Map<string, fontkit.Glyph[] | null>()

/** The glyphs that draw one cluster, or null when the font cannot draw it. */
function glyphsOf(cluster: string): fontkit.Glyph[] | null {
  let glyphs = known.get(cluster)
  if (glyphs !== undefined) return glyphs
  const f = font()
  const points = [...cluster.normalize('NFC')].map((c) => c.codePointAt(0)!)
  glyphs = points.some((p) => !DRAWABLE.test(String.fromCodePoint(p)) || !f.hasGlyphForCodePoint(p))
    ? null
    : points.map((p) => f.glyphForCodePoint(p))
  if (known.size > 10_000) known.clear()
  known.set(cluster, glyphs)
  return glyphs
}

/** One label font, for one PDF: character ids are given out as text is set. */
export class LabelFont {
  #subset = font().createSubset()
  #cids = new Map<string, number>() // `${glyph id} ${text}` -> character id
  #gids: number[] = [0] // by character id: subset glyph id
  #widths: number[] = [0] // by character id: advance in 1/1000 em
  #texts: string[] = [''] // by character id: the text it stands for

  #cid(glyph: fontkit.Glyph, text: string): number {
    const key = `${glyph.id} ${text}`
    let cid = this.#cids.get(key)
    if (cid !== undefined) return cid
    const mark = font().glyphForCodePoint(REPLACEMENT)
    if (this.#gids.length >= MAX_CID - 1 && key !== `${mark.id} `) return this.#cid(mark, '')
    cid = this.#gids.length
    this.#cids.set(key, cid)
    this.#gids.push(this.#subset.includeGlyph(glyph) as unknown as number) // its id in the subset
    this.#widths.push(Math.round((glyph.advanceWidth * 1000) / font().unitsPerEm))
    this.#texts.push(text)
    return cid
  }

  /**
   * Character ids for `text`, and their advances in em. A cluster drawn with several glyphs maps
   * its text to the first; a cluster the font cannot draw is the replacement mark.
   */
  set(text: string): { cids: number[]; advances: number[] } {
    const cids: number[] = []
    const advances: number[] = []
    for (const { segment } of segmenter.segment(text.replace(/[\t\n\r]/g, ' '))) {
      const glyphs = glyphsOf(segment) ?? [font().glyphForCodePoint(REPLACEMENT)]
      glyphs.forEach((glyph, i) => {
        const cid = this.#cid(glyph, i === 0 ? segment : '')
        cids.push(cid)
        advances.push(this.#widths[cid]! / 1000)
      })
    }
    return { cids, advances }
  }

  get used(): boolean {
    return this.#gids.length > 1
  }

  /**
   * The font's PDF objects, numbered from `first`: Type 0 font, CID font, descriptor, subset font
   * file, ToUnicode map, CID-to-glyph map. `object(id, body, dict?)` writes one.
   */
  write(first: number, object: (id: number, body: string | Uint8Array, dict?: string) => void): void {
    const f = font()
    const em = (v: number) => Math.round((v * 1000) / f.unitsPerEm)
    const [type0, cidFont, descriptor, file, toUnicode, cidToGid] = [
      first,
      first + 1,
      first + 2,
      first + 3,
      first + 4,
      first + 5,
    ]
    const tag = [...createHash('sha256').update(this.#texts.join('\u0000')).digest().subarray(0, 6)]
      .map((b) => String.fromCharCode(65 + (b % 26)))
      .join('')
    const name = `/${tag}+${f.postscriptName}`
    object(
      type0,
      `<< /Type /Font /Subtype /Type0 /BaseFont ${name} /Encoding /Identity-H /DescendantFonts [${cidFont} 0 R] /ToUnicode ${toUnicode} 0 R >>`,
    )
    object(
      cidFont,
      `<< /Type /Font /Subtype /CIDFontType2 /BaseFont ${name} /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor ${descriptor} 0 R /DW 1000 /W [0 [${this.#widths.join(' ')}]] /CIDToGIDMap ${cidToGid} 0 R >>`,
    )
    const b = f.bbox
    const capHeight = f.glyphForCodePoint(0x48).bbox.maxY // H
    object(
      descriptor,
      `<< /Type /FontDescriptor /FontName ${name} /Flags 32 /FontBBox [${[b.minX, b.minY, b.maxX, b.maxY].map(em).join(' ')}] /ItalicAngle 0 /Ascent ${em(f.ascent)} /Descent ${em(f.descent)} /CapHeight ${em(capHeight)} /StemV 80 /FontFile2 ${file} 0 R >>`,
    )
    const subset = this.#subset.encode()
    const packed = deflateSync(subset)
    object(file, packed, `<< /Length ${packed.length} /Length1 ${subset.length} /Filter /FlateDecode >>`)
    const cmap = toUnicodeCMap(this.#texts)
    object(toUnicode, cmap, `<< /Length ${cmap.length} >>`)
    const map = Buffer.alloc(this.#gids.length * 2)
    for (const [cid, gid] of this.#gids.entries()) map.writeUInt16BE(gid, cid * 2)
    const packedMap = deflateSync(map)
    object(cidToGid, packedMap, `<< /Length ${packedMap.length} /Filter /FlateDecode >>`)
  }
}

/** Number of PDF objects `LabelFont.write` takes. */
export const LABEL_FONT_OBJECTS = 6

const hex4 = (n: number) => n.toString(16).padStart(4, '0')
const utf16Hex = (text: string) =>
  [...Buffer.from(text, 'utf16le').swap16()].map((b) => b.toString(16).padStart(2, '0')).join('')

/** A ToUnicode CMap: each character id to the text it stands for (UTF-16BE), in blocks of 100. */
function toUnicodeCMap(texts: string[]): string {
  const entries = texts.flatMap((text, cid) => (cid > 0 && text ? [`<${hex4(cid)}> <${utf16Hex(text)}>`] : []))
  const blocks: string[] = []
  for (let i = 0; i < entries.length; i += 100) {
    const block = entries.slice(i, i + 100)
    blocks.push(`${block.length} beginbfchar\n${block.join('\n')}\nendbfchar`)
  }
  return [
    '/CIDInit /ProcSet findresource begin',
    '12 dict begin',
    'begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
    '/CMapName /Adobe-Identity-UCS def',
    '/CMapType 2 def',
    '1 begincodespacerange',
    '<0000> <ffff>',
    'endcodespacerange',
    ...blocks,
    'endcmap',
    'CMapName currentdict /CMapResource defineresource pop',
    'end',
    'end',
  ].join('\n')
}

/** Character ids as the hex string of a PDF text operator (two bytes each, Identity-H). */
export const cidHex = (cids: number[]) => cids.map(hex4).join('')
