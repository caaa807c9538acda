import { layoutSymbol } from './layout'
import { toPng } from './png'
import type { Format, SymbolSettings } from './schemas'
import { resolveSymbol } from './symbology'
import { toEps, toPdf, toSvg } from './writers'

export const CONTENT_TYPES: Record<Format, string> = {
  svg: 'image/svg+xml',
  png: 'image/png',
  eps: 'application/postscript',
  pdf: 'application/pdf',
}

export type RenderedBarcode = { bytes: Uint8Array | string; contentType: string; fileName: string }

/** One symbol in the requested format (contract §8). Throws 422 when the type cannot carry the input. */
export async function renderBarcode(input: string, s: SymbolSettings): Promise<RenderedBarcode> {
  const symbol = resolveSymbol(input, s.barcode_type)
  const drawing = layoutSymbol(symbol, s)
  const bytes =
    s.format === 'svg'
      ? toSvg(drawing, s.embed_font)
      : s.format === 'png'
        ? toPng(drawing, s.dpi)
        : s.format === 'eps'
          ? toEps(drawing, symbol.human)
          : await toPdf(drawing, symbol.human)
  return { bytes, contentType: CONTENT_TYPES[s.format], fileName: `${symbol.fileName}.${s.format}` }
}
